"""JUnit XML: one testcase per check; fail → <failure>, error → <error>, skip → <skipped>.
Warnings pass (with their text in system-out) so CI dashboards stay green unless --strict."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from envdoctor.core.api import Status
from envdoctor.core.report import Report
from envdoctor.reporters.escape import terminal


def render_junit(report: Report, *, verbose: bool = False, color: bool = False, strict: bool = False) -> str:
    c = report.counts()
    tests, failures, errors = str(len(report.results)), str(c["fail"] + (c["warn"] if strict else 0)), str(c["error"])
    suite = ET.Element(
        "testsuite",
        name="envdoctor",
        tests=tests,
        failures=failures,
        errors=errors,
        skipped=str(c["skip"]),
        time=f"{report.duration:.3f}",
        timestamp=terminal(str(report.started_at)),  # every attribute from a report: another machine's text
    )
    for r in report.results:
        case = ET.SubElement(suite, "testcase", classname=terminal(f"envdoctor.{r.area}"), name=terminal(r.id), time=f"{r.duration:.3f}")
        text = terminal(
            "\n".join(
                filter(
                    None,
                    [r.message, f"hint: {r.hint}" if r.hint else ""]
                    + [f"fix: {f.command}" + (" (as root)" if f.needs_root else "") for f in r.fixes]
                    + [f"{i.status.value}: {i.name}: {i.message}" for i in r.items],
                )
            )
        )  # XML holds no control character: they are shown as escapes
        message = terminal(r.message)
        if r.status is Status.FAIL or (strict and r.status is Status.WARN):
            ET.SubElement(case, "failure", message=message, type=r.status.value).text = text
        elif r.status is Status.ERROR:
            ET.SubElement(case, "error", message=message, type="error").text = text
        elif r.status is Status.SKIP:
            ET.SubElement(case, "skipped", message=message)
        elif r.message:
            ET.SubElement(case, "system-out").text = f"{r.status.value}: {text}"
    root = ET.Element("testsuites", name="envdoctor", tests=tests, failures=failures, errors=errors)
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
