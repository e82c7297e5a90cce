"""The economics of a move, checked against numbers worked out by hand from `gpuport plan`."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from gpuport.assess.decision_model import DecisionInputError, DecisionSettings, Economics
from gpuport.assess.economics import (
    HOURS_PER_MONTH,
    SENSITIVITY_SPEED,
    economics_missing,
    estimate_economics,
    payback_span,
)
from gpuport.config import ConfigError
from gpuport.plan.catalog import catalog, find_gpu
from gpuport.plan.model_spec import ModelSpec, load_model
from gpuport.plan.planner import PlanEntry, plan, request_for
from gpuport.plan.prices import Price, default_prices

SOURCE = "pyproject.toml [tool.gpuport.decision]"
BATCH = 32
CONTEXT = 4096
EFFORT = (40.0, 160.0)
TOKENS = 3e10  # output tokens a month: several copies of an 8B model on either vendor


@pytest.fixture(scope="module")
def model() -> ModelSpec:
    return load_model("llama-3.1-8b")


def _entry(model: ModelSpec, gpu_id: str, prices: dict[str, Price] | None = None) -> PlanEntry:
    """The plan's own entry for one GPU at the workload the tests use."""
    gpu = find_gpu(gpu_id)
    assert gpu is not None
    result = plan(
        model,
        request_for(model, context=CONTEXT, batch=BATCH),
        [gpu],
        prices if prices is not None else default_prices(),
    )
    (entry,) = result.entries
    assert entry.fits and entry.decode is not None
    return entry


def _gpus_for(tokens: float, entry: PlanEntry, speed: float = 1.0) -> int:
    """By hand: whole copies of the model at the plan's decode rate, 730 h a month."""
    assert entry.decode is not None
    month = entry.decode.tokens_per_s * speed * 3600 * 730
    return math.ceil(tokens / month) * entry.tp * entry.pp


BASE = DecisionSettings(
    current_gpu="h100-sxm",
    tokens_per_month=TOKENS,
    engineer_usd_per_hour=120.0,
    candidate_gpus=("mi300x",),
    source=SOURCE,
)


def _estimate(
    model: ModelSpec, settings: DecisionSettings, prices: dict[str, Price] | None = None
) -> Economics:
    economics = estimate_economics(
        settings, EFFORT, model, context=CONTEXT, batch=BATCH, prices=prices
    )
    assert economics is not None
    return economics


def test_each_option_is_sized_and_priced_from_the_plans_own_speed(model: ModelSpec) -> None:
    economics = _estimate(model, BASE)
    h100, mi300x = _entry(model, "h100-sxm"), _entry(model, "mi300x")
    prices = default_prices()
    today_gpus, amd_gpus = _gpus_for(TOKENS, h100), _gpus_for(TOKENS, mi300x)
    today_usd = today_gpus * prices["h100-sxm"].usd_per_hour * HOURS_PER_MONTH
    amd_usd = amd_gpus * prices["mi300x"].usd_per_hour * HOURS_PER_MONTH
    assert economics.today is not None and economics.best is not None
    assert (economics.today.gpu_id, economics.today.gpus) == ("h100-sxm", today_gpus)
    assert economics.today.usd_per_month == pytest.approx(today_usd)
    assert h100.decode is not None and mi300x.decode is not None
    assert economics.today.tokens_per_s_per_gpu == pytest.approx(
        h100.decode.tokens_per_s / h100.devices
    )
    assert [o.gpu_id for o in economics.options] == ["mi300x"]
    assert economics.best == economics.options[0]
    assert economics.best.gpus == amd_gpus
    assert economics.best.usd_per_month == pytest.approx(amd_usd)
    saving = today_usd - amd_usd
    assert saving > 0  # at kb/prices.toml's prices an MI300X serves an 8B model for less
    assert economics.monthly_saving_usd == pytest.approx(saving)
    assert economics.move_hours == EFFORT
    assert economics.move_usd == (EFFORT[0] * 120.0, EFFORT[1] * 120.0)
    assert economics.payback_months == pytest.approx((4800.0 / saving, 19200.0 / saving))


def test_the_default_candidates_are_the_catalogs_amd_datacenter_gpus_with_a_price(
    model: ModelSpec,
) -> None:
    economics = _estimate(model, replace(BASE, candidate_gpus=()))
    prices = default_prices()
    expected = {
        g.id
        for g in catalog().values()
        if g.vendor == "amd" and g.segment == "datacenter" and g.id in prices
    }
    assert expected and {o.gpu_id for o in economics.options} == expected
    monthly = [o.usd_per_month for o in economics.options]
    assert all(m is not None for m in monthly)
    assert economics.best is not None
    assert economics.best.usd_per_month == min(m or 0.0 for m in monthly)


def test_the_assumptions_name_the_engine_workload_month_and_each_prices_source(
    model: ModelSpec,
) -> None:
    text = "\n".join(_estimate(model, BASE).assumptions)
    prices = default_prices()
    for needle in (
        "vllm",
        f"batch {BATCH}",
        f"{CONTEXT:,} tokens",
        "730 h a month",
        "busy all the time",
        prices["h100-sxm"].source,
        prices["mi300x"].source,
        str(prices["mi300x"].date),
        "$120 an hour",
    ):
        assert needle in text, needle


def test_payback_is_none_and_says_never_when_amd_costs_more(model: ModelSpec) -> None:
    dear = default_prices()
    dear["mi300x"] = Price(40.0, "user", "test", "a test's price", None)
    economics = _estimate(model, BASE, prices=dear)
    assert economics.monthly_saving_usd is not None and economics.monthly_saving_usd < 0
    assert economics.payback_months is None
    assert economics.move_usd == (4800.0, 19200.0)  # the move still costs what it costs
    assert "never pays back at these prices" in economics.sensitivity[0]


def test_at_80_percent_of_rocms_speed_the_payback_is_longer_and_worked_out_the_same_way(
    model: ModelSpec,
) -> None:
    economics = _estimate(model, BASE)
    assert economics.payback_months is not None and economics.today is not None
    mi300x = _entry(model, "mi300x")
    slow_gpus = _gpus_for(TOKENS, mi300x, SENSITIVITY_SPEED)
    assert slow_gpus > _gpus_for(TOKENS, mi300x)  # the volume is large enough to show it
    slow_usd = slow_gpus * default_prices()["mi300x"].usd_per_hour * HOURS_PER_MONTH
    assert economics.today.usd_per_month is not None
    saving = economics.today.usd_per_month - slow_usd
    low, high = 4800.0 / saving, 19200.0 / saving
    assert low > economics.payback_months[0] and high > economics.payback_months[1]
    line = economics.sensitivity[0]
    assert line.startswith("if ROCm reaches only 80% of the estimated speed")
    assert f"{slow_gpus} MI300X" in line
    assert f"payback becomes {low:,.1f}\N{EN DASH}{high:,.1f} months" in line


def test_the_fitted_range_of_the_amd_estimate_is_a_second_sensitivity_line(
    model: ModelSpec,
) -> None:
    economics = _estimate(model, BASE)
    decode = _entry(model, "mi300x").decode
    assert decode is not None and decode.uncertainty is not None
    (line,) = [s for s in economics.sensitivity if s.startswith("within the fitted range")]
    factors = f"{decode.uncertainty.low_factor:.2f}\N{EN DASH}{decode.uncertainty.high_factor:.2f}x"
    assert factors in line and decode.uncertainty.basis in line


def test_a_regulated_team_adds_its_revalidation_hours_to_the_move(model: ModelSpec) -> None:
    regulated = _estimate(model, replace(BASE, regulated=True, revalidation_hours=200.0))
    assert regulated.move_hours == (240.0, 360.0)
    assert regulated.move_usd == (240.0 * 120.0, 360.0 * 120.0)
    assert any("200 h of revalidation" in a for a in regulated.assumptions)
    not_regulated = _estimate(model, replace(BASE, regulated=False, revalidation_hours=200.0))
    assert not_regulated.move_hours == EFFORT
    unsaid = _estimate(model, replace(BASE, regulated=True))
    assert unsaid.move_hours == EFFORT
    assert any("leave revalidation out" in a for a in unsaid.assumptions)


def test_without_an_engineer_rate_the_hours_are_shown_but_no_dollars(model: ModelSpec) -> None:
    economics = _estimate(model, replace(BASE, engineer_usd_per_hour=None))
    assert economics.move_hours == EFFORT
    assert economics.move_usd is None and economics.payback_months is None
    assert economics.monthly_saving_usd is not None and economics.monthly_saving_usd > 0
    assert any("no `engineer_usd_per_hour`" in a for a in economics.assumptions)


def test_declared_gpu_hours_are_costed_by_the_hour_at_the_plans_speed_ratio(
    model: ModelSpec,
) -> None:
    settings = replace(BASE, tokens_per_month=None, gpu_hours_per_month=1000.0, current_gpu_count=4)
    economics = _estimate(model, settings)
    h100, mi300x = _entry(model, "h100-sxm"), _entry(model, "mi300x")
    assert h100.decode is not None and mi300x.decode is not None
    prices = default_prices()
    ratio = (h100.decode.tokens_per_s / h100.devices) / (
        mi300x.decode.tokens_per_s / mi300x.devices
    )
    assert economics.today is not None and economics.best is not None
    assert economics.today.usd_per_month == pytest.approx(1000.0 * prices["h100-sxm"].usd_per_hour)
    assert economics.today.gpus == 4
    assert economics.best.usd_per_month == pytest.approx(
        1000.0 * ratio * prices["mi300x"].usd_per_hour
    )


def test_without_a_volume_or_a_model_there_are_no_economics_and_the_reason_says_what_to_give(
    model: ModelSpec,
) -> None:
    no_volume = replace(BASE, tokens_per_month=None)
    assert estimate_economics(no_volume, EFFORT, model) is None
    (reason,) = economics_missing(no_volume, model)
    assert "tokens_per_month" in reason and "gpu_hours_per_month" in reason
    assert estimate_economics(BASE, EFFORT, None) is None
    (reason,) = economics_missing(BASE, None)
    assert "--model" in reason
    hours_alone = replace(no_volume, current_gpu=None, gpu_hours_per_month=500.0)
    assert estimate_economics(hours_alone, EFFORT, model) is None
    assert any("current_gpu" in r for r in economics_missing(hours_alone, model))
    assert economics_missing(BASE, model) == ()


def test_tokens_without_a_current_gpu_still_cost_the_amd_options(model: ModelSpec) -> None:
    economics = _estimate(model, replace(BASE, current_gpu=None))
    assert economics.today is None and economics.monthly_saving_usd is None
    assert economics.best is not None and economics.best.gpus == _gpus_for(
        TOKENS, _entry(model, "mi300x")
    )
    assert economics.payback_months is None


def test_a_fleet_too_small_for_the_declared_volume_is_an_error_naming_the_key(
    model: ModelSpec,
) -> None:
    h100 = _entry(model, "h100-sxm")
    assert _gpus_for(TOKENS, h100) > 1
    with pytest.raises(DecisionInputError) as caught:
        _estimate(model, replace(BASE, current_gpu_count=1))
    assert caught.value.key == "current_gpu_count"
    assert isinstance(caught.value, ConfigError)  # the CLI reports it and exits 2
    message = str(caught.value)
    assert message.startswith(f"{SOURCE}: current_gpu_count = 1 cannot serve")
    assert "tokens_per_month" in message
    # a fleet large enough is costed by what the volume needs, both vendors sized alike
    big = _estimate(model, replace(BASE, current_gpu_count=500))
    assert big.today is not None and big.today.gpus == _gpus_for(TOKENS, h100)


def test_more_gpu_hours_than_the_fleet_runs_in_a_month_is_an_error(model: ModelSpec) -> None:
    settings = replace(BASE, tokens_per_month=None, gpu_hours_per_month=3000.0, current_gpu_count=4)
    with pytest.raises(DecisionInputError) as caught:
        _estimate(model, settings)
    assert caught.value.key == "gpu_hours_per_month"
    assert "4 GPUs run in a month (2,920 h)" in str(caught.value)


def test_an_unknown_candidate_is_an_error_naming_the_key(model: ModelSpec) -> None:
    with pytest.raises(DecisionInputError) as caught:
        _estimate(model, replace(BASE, candidate_gpus=("mi999x",)))
    assert caught.value.key == "candidate_gpus"
    assert "'mi999x'" in str(caught.value) and SOURCE in str(caught.value)


def test_declared_gpu_hours_too_few_for_the_declared_tokens_is_an_error(model: ModelSpec) -> None:
    with pytest.raises(DecisionInputError) as caught:
        _estimate(model, replace(BASE, gpu_hours_per_month=10.0))
    assert caught.value.key == "gpu_hours_per_month"
    assert "gpu_hours_per_month = 10 cannot serve tokens_per_month = 30,000,000,000" in str(
        caught.value
    )


def test_a_current_gpu_that_cannot_hold_the_model_leaves_today_uncosted_and_says_so() -> None:
    huge = load_model("llama-3.1-405b")
    by_hours = replace(
        BASE, current_gpu="rtx-3090", tokens_per_month=None, gpu_hours_per_month=500.0
    )
    economics = estimate_economics(by_hours, EFFORT, huge)
    assert economics is not None
    assert economics.today is None and economics.options == () and economics.best is None
    assert economics.move_usd == (4800.0, 19200.0)
    assert any(
        "RTX 3090 (current_gpu) does not hold llama-3.1-405b" in a for a in economics.assumptions
    )
    by_tokens = estimate_economics(
        replace(BASE, current_gpu="rtx-3090", candidate_gpus=("mi300x", "mi250x")), EFFORT, huge
    )
    assert by_tokens is not None and by_tokens.today is None
    assert [o.gpu_id for o in by_tokens.options] == ["mi300x", "mi250x"]  # unpriced last
    assert by_tokens.options[1].usd_per_month is None
    assert by_tokens.best is not None and by_tokens.best.gpu_id == "mi300x"
    assert any("MI250X: counted and priced per GCD" in a for a in by_tokens.assumptions)


@pytest.mark.parametrize(
    ("key", "settings"),
    [
        ("tokens_per_month", replace(BASE, tokens_per_month=-1.0)),
        ("engineer_usd_per_hour", replace(BASE, engineer_usd_per_hour=0.0)),
        ("revalidation_hours", replace(BASE, regulated=True, revalidation_hours=-5.0)),
        ("current_gpu_count", replace(BASE, current_gpu_count=0)),
    ],
)
def test_a_number_at_or_below_zero_is_an_error_naming_its_key(
    model: ModelSpec, key: str, settings: DecisionSettings
) -> None:
    with pytest.raises(DecisionInputError) as caught:
        estimate_economics(settings, EFFORT, model)
    assert caught.value.key == key
    assert f"{SOURCE}: {key} must be a number above zero" in str(caught.value)


def test_a_payback_under_a_month_is_told_in_days_not_as_zero_months() -> None:
    assert payback_span((2.0, 6.0)) == "2.0\u20136.0 months"
    assert payback_span((0.1, 0.5)) == "3.0\u201315.2 days"
    assert payback_span((0.5, 0.5)) == "15.2 days"
