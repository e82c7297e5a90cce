"""kb/gpu_stack.toml and the doctor's fields of kb/gpu_arch.toml: well-formed and consistent."""

from __future__ import annotations

from gpuport import kb
from gpuport.doctor.probes import override_gfx
from gpuport.kb import gpu_stack


def test_every_cuda_release_needs_at_least_its_family_driver() -> None:
    for entry in gpu_stack.cuda_drivers():
        assert gpu_stack.version_key(entry.family_driver) <= gpu_stack.version_key(
            entry.toolkit_driver
        ), entry.cuda
        assert entry.sources and entry.checked


def test_newer_cuda_never_needs_an_older_driver() -> None:
    drivers = [gpu_stack.version_key(e.toolkit_driver) for e in gpu_stack.cuda_drivers()]
    assert drivers == sorted(drivers)


def test_every_published_cuda_build_has_a_driver_entry() -> None:
    for release, cudas in gpu_stack.pytorch_cuda_releases().items():
        for cuda in cudas:
            assert gpu_stack.cuda_driver(cuda) is not None, (release, cuda)


def test_torch_rocm_targets_are_known_gfx_ids_and_only_grow() -> None:
    seen: set[str] = set()
    for entry in gpu_stack.torch_rocm_archs():
        assert all(kb.find_gpu_arch(gfx) is not None for gfx in entry.archs), entry.rocm_from
        assert seen <= set(entry.archs), entry.rocm_from
        seen = set(entry.archs)


def test_overrides_point_at_an_official_target_of_the_same_generation() -> None:
    with_override = [a for a in kb.gpu_architectures().values() if a.hsa_override]
    assert {a.gfx for a in with_override} >= {"gfx1031", "gfx1032", "gfx1103"}
    for arch in with_override:
        target = override_gfx(arch.hsa_override)
        assert target is not None and target[:-2] == arch.gfx[:-2], arch.gfx
        spoofed = kb.find_gpu_arch(target)
        assert spoofed is not None and spoofed.officially_supported, arch.gfx


def test_rocm_since_is_a_version() -> None:
    for arch in kb.gpu_architectures().values():
        if arch.rocm_since:
            gpu_stack.version_key(arch.rocm_since)
            assert arch.officially_supported, arch.gfx


def test_the_pytorch_cuda_index_url() -> None:
    assert gpu_stack.pytorch_cuda_index("12.6") == "https://download.pytorch.org/whl/cu126"
    assert gpu_stack.cuda_driver("12.7") == gpu_stack.cuda_driver("12.6")  # newest below
    assert gpu_stack.cuda_driver("nonsense") is None


def test_every_entry_names_https_sources_and_the_day_it_was_checked() -> None:
    entries = [
        *gpu_stack.cuda_drivers(),
        *gpu_stack.torch_rocm_archs(),
        *gpu_stack.container_gpus().values(),
    ]
    for entry in entries:
        assert entry.sources and all(s.startswith("https://") for s in entry.sources), entry
        assert entry.checked.year >= 2026, entry


def test_family_drivers_are_the_minor_compatibility_floor_of_their_major() -> None:
    floors = {"11": (450,), "12": (525,), "13": (580,)}
    for entry in gpu_stack.cuda_drivers():
        floor = floors[entry.cuda.split(".")[0]]
        assert gpu_stack.version_key(entry.family_driver)[:1] == floor, entry.cuda


def test_amd_pci_ids_name_a_product_of_their_gfx_target() -> None:
    devices = gpu_stack.amd_pci_devices()
    assert {0x74A1, 0x740C, 0x740F, 0x738C, 0x74A5, 0x75A3, 0x744C, 0x73BF, 0x73DF} <= set(devices)
    for device in devices.values():
        arch = kb.find_gpu_arch(device.gfx)
        assert arch is not None, device
        models = {w for p in arch.products for w in p.split() if any(c.isdigit() for c in w)}
        assert any(model in device.name for model in models), device


def test_an_amd_pci_id_gives_the_name_and_target() -> None:
    mi300x = gpu_stack.amd_pci_device(0x74A1)
    assert mi300x is not None and mi300x.gfx == "gfx942" and "MI300X" in mi300x.name
    assert gpu_stack.amd_pci_device(0xFFFF) is None and gpu_stack.amd_pci_device(None) is None


def test_the_w7800_is_a_navi_31_gfx1100_like_its_48gb_sibling() -> None:
    # pci.ids names 745e "Navi 31 [Radeon Pro W7800]"; AMD's table gives the card gfx1100
    w7800 = kb.find_gpu_arch("Radeon PRO W7800")
    assert w7800 is not None and w7800.gfx == "gfx1100"
    device = gpu_stack.amd_pci_device(0x745E)
    assert device is not None and device.gfx == "gfx1100" and "W7800" in device.name


def test_every_container_runtime_has_a_fix_for_both_vendors() -> None:
    table = gpu_stack.container_gpus()
    for runtime in ("docker", "podman", "kubernetes"):
        assert {(runtime, "amd"), (runtime, "nvidia")} <= set(table), runtime
    assert table[("docker", "nvidia")].run == "docker run --gpus all ..."
    assert table[("docker", "amd")].run == "docker run {amd_flags} ..."
    assert gpu_stack.container_gpu("lxc", "amd") is None
