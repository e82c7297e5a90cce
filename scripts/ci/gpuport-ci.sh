#!/usr/bin/env bash
# The shell steps of gpuport's GitHub Action (action.yml) and GitLab template
# (docs/ci/gitlab-ci.yml), kept here so that tests/ci runs them against a real git repository.
#
#   gpuport-ci.sh install        pip install gpuport from GPUPORT_SOURCE (the action's own folder)
#   gpuport-ci.sh scan           the whole project as SARIF          -> $OUT/gpuport.sarif
#   gpuport-ci.sh diff           what the change adds, as Markdown   -> $OUT/gpuport-pr.md
#   gpuport-ci.sh comment-body   the PR comment's request body       -> $OUT/gpuport-comment.json
#   gpuport-ci.sh post-comment   post it, or edit gpuport's earlier comment (GitHub, needs gh)
#   gpuport-ci.sh codequality    GitLab's code quality report        -> $OUT/gl-code-quality-report.json
#   gpuport-ci.sh gitlab-note    post or edit the merge request note (GitLab, needs a token)
#   gpuport-ci.sh port-check     gpuport port --check as Markdown    -> $OUT/gpuport-port-check.md
#   gpuport-ci.sh finish         exit with the status --fail-on asks for
#
# Settings (environment): GPUPORT_PATH (.), GPUPORT_FAIL_ON (the project's [tool.gpuport] or
# gpuport's default), GPUPORT_DIFF_BASE (a git ref; empty: no diff step), GPUPORT_LINK_BASE
# (the URL of the repository's files at the commit, such as
# https://github.com/OWNER/REPO/blob/SHA/: the comment's file links start with it and the
# scanned folder's path in the repository; empty: relative links), GPUPORT_OUT (the
# folder the files go to; outside the project so that no scan reads them), GPUPORT (the
# command that runs gpuport), PYTHON (the Python that installs it and writes the JSON files). Each step that runs gpuport records its exit status in
# $OUT/<step>.status; `finish` fails on the diff's status when there is one (a pull request
# fails on what it adds), else on the whole scan's, and on port --check's when it ran. Exit
# status 2 (gpuport could not analyse the input) always fails.
set -euo pipefail

OUT="${GPUPORT_OUT:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/gpuport}"
TARGET="${GPUPORT_PATH:-.}"
PYTHON="${PYTHON:-python}"
read -r -a GPUPORT_CMD <<< "${GPUPORT:-gpuport}"

fail_on_args=()
if [[ -n "${GPUPORT_FAIL_ON:-}" ]]; then
    fail_on_args=(--fail-on "$GPUPORT_FAIL_ON")
fi

# Tell a later GitHub step where a file is (no-op outside GitHub Actions).
set_output() {
    if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
        printf '%s=%s\n' "$1" "$2" >> "$GITHUB_OUTPUT"
    fi
}

# Run gpuport; record its exit status instead of stopping the job, so that the upload and
# the comment still happen when findings fail the build.
run_gpuport() {
    local step=$1
    shift
    local status=0
    "${GPUPORT_CMD[@]}" "$@" || status=$?
    printf '%s\n' "$status" > "$OUT/$step.status"
    echo "gpuport $step: exit status $status" >&2
    if [[ $status -gt 2 ]]; then  # interrupted or killed: not a result
        exit "$status"
    fi
}

mkdir -p "$OUT"

case "${1:-}" in
install)
    "$PYTHON" -m pip install --disable-pip-version-check --quiet "${GPUPORT_SOURCE:?GPUPORT_SOURCE: the folder to install gpuport from}"
    ;;
scan)
    run_gpuport scan scan "$TARGET" --no-progress --format sarif -o "$OUT/gpuport.sarif" "${fail_on_args[@]}"
    set_output sarif "$OUT/gpuport.sarif"
    ;;
diff)
    if [[ -z "${GPUPORT_DIFF_BASE:-}" ]]; then
        echo "gpuport diff: no base ref (GPUPORT_DIFF_BASE); nothing to compare with" >&2
        exit 0
    fi
    link_args=()
    if [[ -n "${GPUPORT_LINK_BASE:-}" ]]; then
        # Findings' paths are relative to the scanned folder: add its place in the repository.
        prefix=$(git -C "$TARGET" rev-parse --show-prefix 2>/dev/null || true)
        link_args=(--link-base "${GPUPORT_LINK_BASE%/}/$prefix")
    fi
    run_gpuport diff scan "$TARGET" --no-progress --diff "$GPUPORT_DIFF_BASE" \
        --format markdown -o "$OUT/gpuport-pr.md" "${fail_on_args[@]}" "${link_args[@]}"
    set_output markdown "$OUT/gpuport-pr.md"
    ;;
comment-body)
    # JSON for the REST API's comment endpoints: {"body": "..."}.
    "$PYTHON" - "$OUT/gpuport-pr.md" "$OUT/gpuport-comment.json" <<'PY'
import json, sys
body = open(sys.argv[1], encoding="utf-8").read()
limit = 65536  # GitHub's limit on a comment's length
if len(body) > limit:
    body = body[: limit - 200] + "\n\n*… cut to fit a comment; the SARIF lists every finding.*\n"
with open(sys.argv[2], "w", encoding="utf-8") as out:
    json.dump({"body": body}, out)
PY
    set_output comment "$OUT/gpuport-comment.json"
    ;;
post-comment)
    # Edit gpuport's earlier comment on this pull request (found by its marker), else add one.
    : "${GITHUB_REPOSITORY:?}" "${GPUPORT_PR_NUMBER:?GPUPORT_PR_NUMBER: the pull request}"
    marker='<!-- gpuport:scan-diff -->'
    existing=$(gh api --paginate "repos/$GITHUB_REPOSITORY/issues/$GPUPORT_PR_NUMBER/comments" \
        --jq ".[] | select(.body | startswith(\"$marker\")) | .id" | head -n 1)
    if [[ -n "$existing" ]]; then
        gh api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$existing" \
            --input "$OUT/gpuport-comment.json" > /dev/null
    else
        gh api --method POST "repos/$GITHUB_REPOSITORY/issues/$GPUPORT_PR_NUMBER/comments" \
            --input "$OUT/gpuport-comment.json" > /dev/null
    fi
    ;;
codequality)
    # GitLab's code quality report (a subset of Code Climate's format) from the SARIF:
    # https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format
    "$PYTHON" - "$OUT/gpuport.sarif" "$OUT/gl-code-quality-report.json" <<'PY'
import json, sys
SEVERITY = {"blocker": "blocker", "high": "critical", "medium": "major", "low": "minor", "info": "info"}
log = json.load(open(sys.argv[1], encoding="utf-8"))
issues = []
for run in log["runs"]:
    for result in run["results"]:
        where = result["locations"][0]["physicalLocation"]
        issues.append({
            "description": result["message"]["text"].split("\n", 1)[0],
            "check_name": result["ruleId"],
            "fingerprint": next(iter(result["partialFingerprints"].values())),
            "severity": SEVERITY[result["properties"]["severity"]],
            "location": {
                "path": where["artifactLocation"]["uri"],
                "lines": {"begin": where.get("region", {}).get("startLine", 1)},
            },
        })
with open(sys.argv[2], "w", encoding="utf-8") as out:
    json.dump(issues, out, indent=1)
PY
    ;;
gitlab-note)
    # Edit gpuport's earlier note on this merge request (found by its marker), else add one.
    # Needs a token that may write notes (a project access token in GPUPORT_GITLAB_TOKEN).
    : "${CI_API_V4_URL:?}" "${CI_PROJECT_ID:?}" "${CI_MERGE_REQUEST_IID:?}" "${GPUPORT_GITLAB_TOKEN:?}"
    notes="$CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/$CI_MERGE_REQUEST_IID/notes"
    existing=$(curl --fail --silent --header "PRIVATE-TOKEN: $GPUPORT_GITLAB_TOKEN" \
        "$notes?per_page=100&sort=asc" | "$PYTHON" -c '
import json, sys
marker = "<!-- gpuport:scan-diff -->"
print(next((str(n["id"]) for n in json.load(sys.stdin) if n["body"].startswith(marker)), ""))')
    if [[ -n "$existing" ]]; then
        curl --fail --silent --request PUT --header "PRIVATE-TOKEN: $GPUPORT_GITLAB_TOKEN" \
            --header "Content-Type: application/json" \
            --data @"$OUT/gpuport-comment.json" "$notes/$existing" > /dev/null
    else
        curl --fail --silent --request POST --header "PRIVATE-TOKEN: $GPUPORT_GITLAB_TOKEN" \
            --header "Content-Type: application/json" \
            --data @"$OUT/gpuport-comment.json" "$notes" > /dev/null
    fi
    ;;
port-check)
    run_gpuport port-check port "$TARGET" --check --format markdown -o "$OUT/gpuport-port-check.md"
    set_output port-check "$OUT/gpuport-port-check.md"
    ;;
finish)
    # The diff's status when there is one, else the whole scan's; port --check's when it ran.
    statuses=()
    if [[ -f "$OUT/diff.status" ]]; then
        statuses+=("$(cat "$OUT/diff.status")")
    elif [[ -f "$OUT/scan.status" ]]; then
        statuses+=("$(cat "$OUT/scan.status")")
    fi
    if [[ -f "$OUT/scan.status" && $(cat "$OUT/scan.status") == 2 ]]; then
        statuses+=(2)  # the project could not be analysed: never a pass
    fi
    if [[ -f "$OUT/port-check.status" ]]; then
        statuses+=("$(cat "$OUT/port-check.status")")
    fi
    if [[ ${#statuses[@]} -eq 0 ]]; then
        echo "gpuport finish: no step recorded a result in $OUT" >&2
        exit 2
    fi
    status=0
    for s in "${statuses[@]}"; do
        if [[ $s -gt $status ]]; then
            status=$s
        fi
    done
    exit "$status"
    ;;
*)
    echo "usage: $0 install|scan|diff|comment-body|post-comment|codequality|gitlab-note|port-check|finish" >&2
    exit 2
    ;;
esac
