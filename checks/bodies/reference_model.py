"""The reference model of the smoke and bench work: two conv-bn-relu blocks, pool, linear.

Probe-side only (it receives the already imported ``torch`` module from its caller).
"""


def reference_model(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.Conv2d(64, 128, 3, padding=1),
        nn.BatchNorm2d(128),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(128, 10),
    )
