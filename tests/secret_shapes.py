"""The table of secret shapes the redaction tests hide in every format and command.

Each row: an id, the text as it may reach envdoctor (a variable's value, a message, a paste
line), and the parts that must never be printed (letters and digits only, so that no format's
escaping could hide a leak from the assertion).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

_B64_ASSIGN = base64.b64encode(b"password=B64C4n4ry78abc").decode()
_ADO52 = "adoc4n4ry" + "abcdefghijklmnopqrstuvwxyz234567abcdefghijk"[: 52 - 9]

SHAPES: list[tuple[str, str, tuple[str, ...]]] = [
    # secrets in a URL's query or fragment
    ("query-token", "https://api.example.com/v1/data?token=QtokC4n4ry11&x=1", ("QtokC4n4ry11",)),
    ("query-access-token", "https://api.example.com/cb?access_token=AccC4n4ryTok22", ("AccC4n4ryTok22",)),
    ("query-password", "https://db.example.com/?password=PwdC4n4ry33", ("PwdC4n4ry33",)),
    (
        "sas-sig",
        "https://acct.blob.core.windows.net/c/f.bin?sv=2022-11-02&ss=b&sp=r&se=2030-01-01&sig=SasC4n4ry44abcd%2Bef%3D",
        ("SasC4n4ry44abcd",),
    ),
    (
        "amz-signature",
        "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=0a1b2c3dC4n4ry55sig",
        ("C4n4ry55sig",),
    ),
    ("query-key", "https://maps.googleapis.com/maps/api/js?key=GkeyC4n4ry66", ("GkeyC4n4ry66",)),
    ("fragment-token", "https://x.example.com/oauth/cb#access_token=FragC4n4ry77&token_type=bearer", ("FragC4n4ry77",)),
    ("query-api-key", "https://x.example.com/api?api_key=ApiC4n4ry88", ("ApiC4n4ry88",)),
    ("query-apikey", "https://x.example.com/api?apikey=ApkC4n4ry99", ("ApkC4n4ry99",)),
    ("query-client-secret", "https://x.example.com/api?client_id=app&client_secret=CsecC4n4ry10", ("CsecC4n4ry10",)),
    ("query-pwd", "https://x.example.com/login?user=bob&pwd=PwdC4n4ry12", ("PwdC4n4ry12",)),
    (
        "goog-signature",
        "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=GoogC4n4ry13abcdef",
        ("GoogC4n4ry13abcdef",),
    ),
    # credentials in a URL's user info (package indexes, remotes, brokers)
    (
        "pypi-token-url",
        "https://__token__:pypi-AgEIcHlwaS5vcmcC4n4ry14abcdefghijklmnopqrstuvwxyz0123456789@upload.pypi.org/legacy/",
        ("C4n4ry14",),
    ),
    ("azure-devops-url", "https://build:PatC4n4ry15xyz@pkgs.dev.azure.com/org/proj/_packaging/feed/pypi/simple/", ("PatC4n4ry15xyz",)),
    (
        "gitlab-deploy-url",
        "https://gitlab+deploy-token-42:gldt-DepC4n4ry16abcdefghij@gitlab.com/api/v4/projects/42/packages/pypi/simple",
        ("DepC4n4ry16",),
    ),
    (
        "gitlab-pat-url",
        "https://__token__:glpat-GlpC4n4ry17abcdefghij@gitlab.example.com/api/v4/projects/7/packages/pypi/simple",
        ("GlpC4n4ry17",),
    ),
    ("oauth2-remote", "https://oauth2:TokC4n4ry18@git.example.com/org/repo.git", ("TokC4n4ry18",)),
    ("token-only-userinfo", "https://ghp_GhpC4n4ry19abcdefghijklmnopqrstu@github.com/org/repo.git", ("GhpC4n4ry19",)),
    ("redis-password-url", "redis://:RedisC4n4ry23@cache.internal:6379/0", ("RedisC4n4ry23",)),
    ("amqp-url", "amqp://guest:AmqpC4n4ry24@rabbit:5672//", ("AmqpC4n4ry24",)),
    ("bare-user-pass-host", "rsync -a out/ deploy:BareC4n4ry20x@deploy.example.net:/srv", ("BareC4n4ry20x",)),
    # tokens as path segments: package hosts, chat webhooks
    ("fury-path", "https://pypi.fury.io/FuryC4n4ry20abc/acme/", ("FuryC4n4ry20abc",)),
    ("cloudsmith-path", "https://dl.cloudsmith.io/CsmC4n4ry21xy/acme/repo/python/simple/", ("CsmC4n4ry21xy",)),
    ("packagecloud-path", "https://packagecloud.io/PkgC4n4ry22abcdef/acme/pypi/simple", ("PkgC4n4ry22abcdef",)),
    ("slack-webhook", "https://hooks.slack.com/services/T0C4N4RY25/B0C4N4RY25/SlkC4n4ry25abcdefghijkl", ("SlkC4n4ry25", "B0C4N4RY25")),
    (
        "discord-webhook",
        "https://discord.com/api/webhooks/112233445566778899/DscC4n4ry26-abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJKL",
        ("DscC4n4ry26",),
    ),
    (
        "teams-webhook",
        "https://acme.webhook.office.com/webhookb2/0a1b2c3d-1111-2222-3333-444455556666@7a8b9c0d-1111-2222-3333-444455556666"
        "/IncomingWebhook/OutC4n4ry27abcdef0123456789/0f0e0d0c-1111-2222-3333-444455556666",
        ("OutC4n4ry27",),
    ),
    ("outlook-webhook", "https://outlook.office.com/webhook/abc@def/IncomingWebhook/OlkC4n4ry28/xyz", ("OlkC4n4ry28",)),
    ("zapier-hook", "https://hooks.zapier.com/hooks/catch/123456/ZapC4n4ry29/", ("ZapC4n4ry29",)),
    ("telegram-bot-url", "https://api.telegram.org/bot123456789:AAHTgC4n4ry30abcdefghijklmnopqrstuv/sendMessage", ("C4n4ry30",)),
    ("slack-webhook-bare", "notify hooks.slack.com/services/T0C4N4RY31/B0C4N4RY31/SlkC4n4ry31bare on failure", ("SlkC4n4ry31bare",)),
    (
        "google-chat-hook",
        "https://chat.googleapis.com/v1/spaces/AAAA/messages?key=GchkC4n4ry32&token=GchC4n4ry32abc",
        ("GchC4n4ry32abc", "GchkC4n4ry32"),
    ),
    (
        "logic-app-hook",
        "https://prod-00.westus.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke?api-version=2016-06-01&sv=1.0&sig=LogicC4n4ry33abc",
        ("LogicC4n4ry33abc",),
    ),
    # provider token shapes
    ("hf-token", "token hf_HfC4n4ry34abcdefghijklmnopqrst was set", ("HfC4n4ry34",)),
    ("github-classic", "using ghp_GhC4n4ry35abcdefghijklmnopqrstuvwx", ("GhC4n4ry35",)),
    ("github-fine-grained", "github_pat_11ABCDEFG0GpC4n4ry36_abcdefghijklmnopqrstuvwxyz0123456789", ("GpC4n4ry36",)),
    ("gitlab-pat", "glpat-GlC4n4ry37abcdefghij", ("GlC4n4ry37",)),
    ("openai-project", "sk-proj-SkC4n4ry38abcdefghijklmnopqrstuvwxyz", ("SkC4n4ry38",)),
    ("anthropic", "sk-ant-api03-AntC4n4ry39abcdefghijklmnopqrstuvwxyz", ("AntC4n4ry39",)),
    ("slack-bot", "xoxb-1234567890-0987654321-XoxC4n4ry40abcdef", ("XoxC4n4ry40",)),
    ("slack-user", "xoxp-1234-5678-XoxpC4n4ry41", ("XoxpC4n4ry41",)),
    ("aws-key-id", "aws id AKIAC4N4RY42ABCDEFGH in use", ("C4N4RY42",)),
    ("google-api-key", "AIzaSyAiC4n4ry43abcdefghijklmnopqrstu", ("AiC4n4ry43",)),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJDNG40cnk0NCJ9.JwtC4n4ry44sigabcdef", ("JwtC4n4ry44", "eyJzdWIiOiJDNG40cnk0NCJ9")),
    ("npm-token", "npm_NpmC4n4ry45abcdefghijklmnopqrstuvwxyz", ("NpmC4n4ry45",)),
    ("stripe-live", "sk_live_StrC4n4ry46abcdefghijkl", ("StrC4n4ry46",)),
    ("sendgrid", "SG.SgC4n4ry47abcdefgh.ijklmnopqrstuvwxyzABCD", ("SgC4n4ry47",)),
    ("hex40-login", "wandb login 9f3c0e7a1b2d4c6e8f0a1b2c3d4e5f6a7b8c9d0e", ("9f3c0e7a1b2d4c6e8f0a1b2c3d4e5f6a7b8c9d0e",)),
    ("hex40-bare", "the api key is 0123abcd4567ef890123abcd4567ef8901c4a5e7 here", ("0123abcd4567ef890123abcd4567ef8901c4a5e7",)),
    ("databricks", "dapi0123456789abcdef0123456789abcdef", ("dapi0123456789abcdef",)),
    ("docker-pat", "dckr_pat_DkC4n4ry50abcdefghijklmn", ("DkC4n4ry50",)),
    ("vault", "hvs.VltC4n4ry51abcdefghijklmnopqr", ("VltC4n4ry51",)),
    ("azure-devops-pat", f"pat {_ADO52} end", (_ADO52,)),
    ("google-oauth", "ya29.a0AfBbyC4n4ry86abcdefghijklmnop", ("C4n4ry86",)),
    ("telegram-token", "bot 123456789:AAHTgC4n4ry87abcdefghijklmnopqrstuv", ("C4n4ry87",)),
    # command lines and config lines
    ("netrc", "machine pypi.example.com login alice password NetrcC4n4ry52", ("NetrcC4n4ry52",)),
    ("netrc-lines", "machine h.example.com\n  login bob\n  password NetrcC4n4ry53", ("NetrcC4n4ry53",)),
    ("flag-password", "twine upload --password CliC4n4ry54 dist/x.whl", ("CliC4n4ry54",)),
    ("flag-token-eq", "tool --token=CliC4n4ry55 run", ("CliC4n4ry55",)),
    ("flag-api-key", "tool --api-key ApiKeyC4n4ry89 run", ("ApiKeyC4n4ry89",)),
    ("mysql-p-attached", "mysql -h db -u root -pMyC4n4ry56 app", ("MyC4n4ry56",)),
    ("mysql-p-spaced", "mysqldump -u root -p MyC4n4ry57 app", ("MyC4n4ry57",)),
    ("sshpass", "sshpass -p SshC4n4ry58 ssh host", ("SshC4n4ry58",)),
    ("redis-cli", "redis-cli -h r -a RedC4n4ry59 ping", ("RedC4n4ry59",)),
    ("curl-user", "curl -u bob:CurlC4n4ry60 https://x.example.com", ("CurlC4n4ry60",)),
    ("export-key", "export OPENAI_API_KEY=OaiC4n4ry90", ("OaiC4n4ry90",)),
    # JSON or dict text inside a value
    ("json-api-key", '{"api_key": "JsonC4n4ry61", "model": "m"}', ("JsonC4n4ry61",)),
    ("dict-password", "{'password': 'DictC4n4ry62', 'user': 'x'}", ("DictC4n4ry62",)),
    (
        "service-account",
        '{"type": "service_account", "private_key_id": "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "private_key": '
        '"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC4n4ry63\\n-----END PRIVATE KEY-----\\n"}',
        ("C4n4ry63", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"),
    ),
    ("docker-auth", '{"auths": {"registry.example.com": {"auth": "ZG9ja2VyOkRvY2tDNG40cnk3NQ=="}}}', ("ZG9ja2VyOkRvY2tDNG40cnk3NQ",)),
    # headers
    ("x-api-key", 'curl -H "X-API-Key: XapiC4n4ry64" https://x', ("XapiC4n4ry64",)),
    ("bearer", "Authorization: Bearer BearC4n4ry65abc", ("BearC4n4ry65abc",)),
    ("basic", "Authorization: Basic QmFzaWNDNG40cnk2Njp1c2Vy", ("QmFzaWNDNG40cnk2Njp1c2Vy",)),
    ("cookie", "Cookie: sessionid=CookC4n4ry67; csrftoken=CsrfC4n4ry67", ("CookC4n4ry67", "CsrfC4n4ry67")),
    ("private-token", "PRIVATE-TOKEN: PrivC4n4ry68", ("PrivC4n4ry68",)),
    ("proxy-auth", "Proxy-Authorization: Basic UHJveHlDNG40cnk4ODpwdw==", ("UHJveHlDNG40cnk4ODpwdw",)),
    # pwd=, pass=, connection strings
    ("odbc-pwd", "Server=db;Uid=sa;Pwd=OdbcC4n4ry69;", ("OdbcC4n4ry69",)),
    ("pass-eq", "pass=PassC4n4ry70", ("PassC4n4ry70",)),
    (
        "azure-connection",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=AzC4n4ry81abcdefghij+klmn==;EndpointSuffix=core.windows.net",
        ("AzC4n4ry81",),
    ),
    ("shared-access-signature", "SharedAccessSignature=sv=2020-01-01&sig=SasC4n4ry84", ("SasC4n4ry84",)),
    ("database-url", "postgres://app:DbC4n4ry82@db.internal:5432/app", ("DbC4n4ry82",)),
    ("sentry-dsn", "https://SentC4n4ry83abcdef@o123.ingest.sentry.io/42", ("SentC4n4ry83abcdef",)),
    # private-key blocks
    ("pem-rsa", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAPemC4n4ry71\n-----END RSA PRIVATE KEY-----", ("PemC4n4ry71",)),
    (
        "openssh",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUOsshC4n4ry72\n-----END OPENSSH PRIVATE KEY-----",
        ("OsshC4n4ry72",),
    ),
    ("pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGPgpC4n4ry73\n-----END PGP PRIVATE KEY BLOCK-----", ("GPgpC4n4ry73",)),
    # encoded or broken
    ("base64-basic-pair", "auth dXNlcjpCNjRDNG40cnk3NA==", ("dXNlcjpCNjRDNG40cnk3NA",)),
    ("base64-assignment", f"payload {_B64_ASSIGN}", (_B64_ASSIGN.rstrip("="),)),
    ("urlencoded-url", "https://x.example.com/go?next=https%3A%2F%2Fuser%3AEncC4n4ry76%40host.example.com%2F", ("EncC4n4ry76",)),
    ("urlencoded-assign", "state token%3DEncC4n4ry77xyz", ("EncC4n4ry77xyz",)),
    ("wrapped-token", "key was hf_SplC4n4ry79abcdefgh\nijklmnopqrstuvwx", ("SplC4n4ry79", "ijklmnopqrstuvwx")),
]

# Secrets by value: variables whose names may not look secret; the value (or its secret part)
# must not be printed anywhere, even where a plugin prints it bare.
ENV_SECRETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "MYSQL_PWD": ("MysqlPwdC4n4ry80", ("MysqlPwdC4n4ry80",)),
    "AZURE_STORAGE_CONNECTION_STRING": (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=EnvAzC4n4ry91abcdefgh;EndpointSuffix=core.windows.net",
        ("EnvAzC4n4ry91abcdefgh",),
    ),
    "DATABASE_URL": ("postgres://app:EnvDbC4n4ry92@db.internal:5432/app", ("EnvDbC4n4ry92",)),
    "PIP_INDEX_URL": ("https://reader:EnvPipC4n4ry93@pkgs.example.com/simple", ("EnvPipC4n4ry93",)),
    "PIP_EXTRA_INDEX_URL": ("https://pkgs.example.com/simple?token=EnvQueryC4n4ry94", ("EnvQueryC4n4ry94",)),
    "TRITON_NOTIFY_HOOK": ("https://hooks.slack.com/services/T0ENV95/B0ENV95/EnvSlackC4n4ry95abcd", ("EnvSlackC4n4ry95abcd",)),
    "TORCH_HUB_TOKEN": ("EnvHubC4n4ry96", ("EnvHubC4n4ry96",)),
}

# Ordinary facts no rule may touch.
ORDINARY = [
    # Prose with a short secret-like word before a colon (seen: the must_pass row of an image build).
    "1 of 2 must-pass checks did not pass: smoke.compile",
    "sig: a signal number, pw: the page width",
    # A mangled C++ symbol, the subject of every "undefined symbol" report (seen redacted whole).
    "ImportError: .../_C.so: undefined symbol: _ZN5torch8autograd10deleteNodeEPNS0_4NodeE",
    "torch 2.5.1+cu124 with CUDA 12.4 and cuDNN 90100",
    "nvidia-cublas-cu12==12.4.5.8",
    "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12",
    "torch-2.5.0a0+git4e9bd1a-cp310-cp310-linux_x86_64.whl",
    "https://download.pytorch.org/whl/cu124/torch-2.5.1%2Bcu124-cp312-cp312-linux_x86_64.whl#sha256="
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "--hash=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "https://files.pythonhosted.org/packages/ab/cd/0123456789abcdef0123456789abcdef0123456789abcdef01234567/triton-3.1.0-cp312-cp312-"
    "manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "Git commit: 4e9bd1a7c8f3b2d6a5e4f3c2b1a09f8e7d6c5b4a",
    "torch.version.git_version = 4e9bd1a7c8f3b2d6a5e4f3c2b1a09f8e7d6c5b4a",
    "GPU-3f1c2a9e-8b7d-4c6e-9a51-2d0e7f4b1c93",
    "MIG-5b0c7d3e-1a2b-4c5d-8e9f-0a1b2c3d4e5f",
    "Driver Version: 550.54.15    CUDA Version: 12.4",
    "TORCH_CUDA_ARCH_LIST=8.0;8.6;9.0+PTX",
    "CUDA_VISIBLE_DEVICES=0,1",
    "Token indices sequence length is longer than the specified maximum",
    "Basic Linear Algebra Subprograms",
    "a password is required for sudo",
    "https://pypi.org/simple/torch/",
    "https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct/resolve/main/config.json",
    "https://github.com/pytorch/pytorch/issues/12345",
    "pip install --index-url https://download.pytorch.org/whl/cu121 torch",
    "docker image sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "PWD=/home/user/project",
    "triton cache /root/.triton/cache/0123456789abcdef0123456789abcdef/kernel.json",
    "NCCL version 2.21.5+cuda12.4",
    "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl",
    "Qwen2VLForConditionalGeneration",
    "pkg @ git+https://github.com/o/r.git@abc123",
    "git@github.com:org/repo.git",
    "compute capability 9.0 (sm_90)",
    "libcuda.so.1 -> libcuda.so.550.54.15",
    "Authentication: failed for user",
    "--token-file /run/secrets/hf",
]


def write_report(path: Path, name: str, messages: list[str], env_vars: dict) -> None:
    """A report as another machine wrote it: one failing check per message, each message
    also in its hint, details and an item."""
    data = {
        "schema_version": "1.0",
        "tool": {"name": "envdoctor", "version": "0.1.0"},
        "started_at": "2026-12-01T00:00:00+00:00",
        "duration_s": 1.0,
        "platform": {"hostname": name, "summary": "Linux"},
        "options": {},
        "summary": {"pass": 0, "warn": 0, "fail": len(messages), "skip": 0, "error": 0, "total": len(messages), "healthy": False},
        "results": [
            {"id": f"x.c{i}", "title": "t", "area": "x", "status": "fail", "message": m, "hint": m, "tags": [], "source": "p",
             "duration_s": 0.1, "details": {"v": m}, "items": [{"name": "i", "status": "fail", "message": m}], "fixes": []}
            for i, m in enumerate(messages)
        ],
        "facts": {"env_vars": env_vars, "dists": {"torch": {"name": "torch", "version": "2.5.1"}}},
    }  # fmt: skip
    path.write_text(json.dumps(data))
