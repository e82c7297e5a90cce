"""Packages the fine-tuning library; dependencies depend on the accelerator."""

from setuptools import find_packages, setup

BASE = [
    "transformers>=4.46",
    "peft>=0.13",
    "accelerate>=0.34",
    "datasets>=3.0",
]


def accelerator_requirements():
    return [
        "xformers>=0.0.27.post2",
        "bitsandbytes>=0.43.3",
        "triton>=3.0.0",
    ]


setup(
    name="finetune-fast",
    version="2025.5.1",
    packages=find_packages(),
    install_requires=BASE + accelerator_requirements(),
)
