#!/usr/bin/env bash
# The steps of the GitHub Action (action.yml at the repository root), kept here so that
# dist/check-action.sh can run them with the files a runner provides pointed at temp
# files. Two subcommands, each reading the action's inputs from INPUT_* variables:
#
#   action.sh install   puts git-astedit on PATH (appends to $GITHUB_PATH)
#   action.sh scan      runs `git astedit scan`, writes $GITHUB_STEP_SUMMARY and
#                       $GITHUB_OUTPUT (findings, errors, sarif-file, preview, exit-code)
#
# install: INPUT_VERSION (empty: the action's own ref when it is vX.Y.Z, else the newest
# release), INPUT_FROM (a local wheel or binary, instead of PyPI: for testing). The
# released binary comes from PyPI's wheel (`pip install git-astedit==VERSION`) into a
# virtual environment under $RUNNER_TEMP: PyPI serves the wheel of each runner's platform
# (Linux x86_64/aarch64, macOS, Windows), pip checks its hash, and a virtual environment
# needs no permission and leaves the runner's Python alone. Needs python3 on the runner
# (every GitHub-hosted runner has it; elsewhere use actions/setup-python first).
#
# scan: INPUT_CONFIG (files, one a line), INPUT_PATHS (pathspecs, one a line or
# space-separated), INPUT_MODE (check | stage | report), INPUT_FORMAT (github | sarif),
# INPUT_SARIF_FILE, INPUT_FAIL_ON_FINDINGS (true | false), INPUT_WORKING_DIRECTORY.
set -euo pipefail

die() {
    echo "::error title=git-astedit action::$*"
    exit 2
}
out() { printf '%s=%s\n' "$1" "$2" >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"; }

install() {
    local temp=${RUNNER_TEMP:-${TMPDIR:-/tmp}}
    local from=${INPUT_FROM:-} version=${INPUT_VERSION:-}
    if [ -n "$from" ]; then
        case "$from" in /*) ;; *) from="${GITHUB_WORKSPACE:-$PWD}/$from" ;; esac
        [ -e "$from" ] || die "from: $from does not exist"
    fi
    if [ -n "$from" ] && [ "${from%.whl}" = "$from" ]; then
        # A binary: its folder goes on PATH (under the name git-astedit, which git needs).
        local dir="$temp/git-astedit-bin"
        mkdir -p "$dir"
        cp "$from" "$dir/git-astedit"
        chmod +x "$dir/git-astedit"
        echo "$dir" >>"${GITHUB_PATH:?}"
        "$dir/git-astedit" --version
        return
    fi
    if [ -z "$from" ] && [ -z "$version" ]; then
        case "${ACTION_REF:-}" in
            v[0-9]*.[0-9]*.[0-9]*) version=${ACTION_REF#v} ;;
        esac
    fi
    local python
    python=$(command -v python3 || command -v python || true)
    [ -n "$python" ] || die "python3 is not on PATH (add actions/setup-python before this action)"
    local venv="$temp/git-astedit-venv"
    "$python" -m venv "$venv"
    local bin="$venv/bin"
    [ -d "$bin" ] || bin="$venv/Scripts" # Windows
    local spec
    if [ -n "$from" ]; then
        spec=$from
    elif [ -n "$version" ]; then
        spec="git-astedit==$version"
    else
        spec=git-astedit
    fi
    "$bin/python" -m pip install --quiet --disable-pip-version-check "$spec"
    echo "$bin" >>"${GITHUB_PATH:?}"
    "$bin/git-astedit" --version
}

# md TEXT: TEXT made safe for a Markdown table cell.
md() { printf '%s' "$1" | sed -e 's/|/\\|/g' -e 's/</\&lt;/g'; }

scan() {
    local mode=${INPUT_MODE:-check} format=${INPUT_FORMAT:-github}
    local fail=${INPUT_FAIL_ON_FINDINGS:-true}
    case "$mode" in check | stage | report) ;; *) die "mode: '$mode' is not check, stage or report" ;; esac
    case "$format" in github | sarif) ;; *) die "format: '$format' is not github or sarif" ;; esac
    case "$fail" in true | false) ;; *) die "fail-on-findings: '$fail' is not true or false" ;; esac
    cd "${GITHUB_WORKSPACE:-.}"
    cd "${INPUT_WORKING_DIRECTORY:-.}"
    command -v git-astedit >/dev/null || die "git-astedit is not on PATH (the install step puts it there)"

    local args=() line word
    while IFS= read -r line; do
        [ -n "$line" ] && args+=(--config "$line")
    done <<<"${INPUT_CONFIG:-}"
    local paths=()
    while IFS= read -r line; do
        for word in $line; do paths+=("$word"); done
    done <<<"${INPUT_PATHS:-}"

    # The base to compare with: only new findings count (scan --baseline).
    local baseline=${INPUT_BASELINE:-}
    if [ -z "$baseline" ]; then
        baseline=none
        [ -n "${GITHUB_BASE_REF:-}" ] && baseline=auto
    fi
    if [ "$baseline" = auto ] && [ -n "${GITHUB_BASE_REF:-}" ]; then
        # A pull request: the merge-base with its base branch, fetched (with enough
        # history for the merge-base) when the checkout lacks it.
        local ref="refs/remotes/origin/$GITHUB_BASE_REF"
        git fetch -q --no-tags origin "+refs/heads/$GITHUB_BASE_REF:$ref" 2>/dev/null || true
        if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
            git fetch -q --no-tags --deepen=200 origin "+refs/heads/$GITHUB_BASE_REF:$ref" 2>/dev/null || true
        fi
        baseline=$(git merge-base HEAD "$ref" 2>/dev/null || git rev-parse --verify -q "$ref^{commit}" || echo auto)
        echo "git astedit scan: comparing with $baseline (merge-base with origin/$GITHUB_BASE_REF)"
    fi
    [ "$baseline" = none ] || args+=("--baseline=$baseline")

    local temp=${RUNNER_TEMP:-${TMPDIR:-/tmp}}
    local report="$temp/git-astedit-report.txt" errs="$temp/git-astedit-report.err"

    # The findings, as text lines `path:line:col: severity[rule]: message`: the count
    # and the summary's table.
    local status=0
    git astedit --no-pager scan --no-color "${args[@]}" -- "${paths[@]}" >"$report" 2>"$errs" || status=$?
    if [ "$status" -ge 2 ]; then
        cat "$report" "$errs"
        die "git astedit scan exited $status: $(head -n1 "$errs")"
    fi
    local pattern='^.*:[0-9]+:[0-9]+: [a-z]+\[[^]]*\]: '
    local findings errors
    findings=$(grep -cE "$pattern" "$report" || true)
    errors=$(grep -cE '^.*:[0-9]+:[0-9]+: error\[' "$report" || true)

    # SARIF for code scanning.
    local sarif=""
    if [ "$format" = sarif ]; then
        sarif=${INPUT_SARIF_FILE:-$temp/git-astedit.sarif}
        local s=0
        git astedit --no-pager scan --format sarif "${args[@]}" -- "${paths[@]}" >"$sarif" 2>>"$errs" || s=$?
        [ "$s" -lt 2 ] || die "git astedit scan --format sarif exited $s"
        cat "$report"
    fi

    # The mode: check (diffs of the fixes, exit 1 when one would change a file), stage
    # (the fixes as one preview), report (the findings only).
    local run=0 preview="" log="$temp/git-astedit-mode.err"
    : >"$log"
    local shown=(--format text --no-color)
    [ "$format" = github ] && shown=(--format github)
    case "$mode" in
        check)
            git astedit --no-pager scan --check "${shown[@]}" "${args[@]}" -- "${paths[@]}" 2>"$log" || run=$?
            ;;
        stage)
            git astedit --no-pager scan --stage "${shown[@]}" "${args[@]}" -- "${paths[@]}" 2>"$log" || run=$?
            preview=$(grep -o 'staged preview [0-9a-f]*' "$log" | head -n1 | sed 's/staged preview //' || true)
            # Staging is the point: nothing to fix (exit 1) is not a failure either.
            [ "$run" -eq 1 ] && run=0
            ;;
        report)
            [ "$format" = github ] && git astedit --no-pager scan --format github "${args[@]}" -- "${paths[@]}" 2>>"$log" || true
            run=$status
            ;;
    esac
    cat "$log" >&2
    [ "$run" -lt 2 ] || die "git astedit scan --$mode exited $run: $(head -n1 "$log")"

    out findings "$findings"
    out errors "$errors"
    out sarif-file "$sarif"
    out preview "$preview"
    out exit-code "$run"

    if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
        {
            echo "### git astedit scan ($mode)"
            echo
            echo "$findings finding(s), $errors error(s). $(tail -n1 "$errs")"
            [ -n "$preview" ] && printf '\nThe fixes are staged as preview `%s`: `git astedit show %s`, `git astedit apply %s`.\n' "$preview" "$preview" "$preview"
            [ "$mode" = check ] && [ "$run" -ne 0 ] && printf '\n%s\n' "$(tail -n1 "$log")"
            if [ "$findings" -gt 0 ]; then
                echo
                echo "| Severity | Rule | Location | Message |"
                echo "| --- | --- | --- | --- |"
                grep -E "$pattern" "$report" | head -n 100 | while IFS= read -r line; do
                    local where=${line%%: [a-z]*\[*}
                    local rest=${line#"$where: "}
                    local severity=${rest%%\[*}
                    local rule=${rest#*\[}
                    rule=${rule%%\]*}
                    local message=${rest#*\]: }
                    echo "| $severity | \`$(md "$rule")\` | \`$(md "$where")\` | $(md "$message") |"
                done
                [ "$findings" -gt 100 ] && echo && echo "(the first 100 of $findings)"
            fi
            [ -n "$sarif" ] && printf '\nSARIF: `%s`\n' "$sarif"
        } >>"$GITHUB_STEP_SUMMARY"
    fi

    if [ "$fail" = true ] && [ "$run" -ne 0 ]; then
        echo "::error title=git astedit scan::scan --$mode: $findings finding(s), $errors error(s)"
        exit 1
    fi
    exit 0
}

case "${1:-}" in
    install) install ;;
    scan) scan ;;
    *) echo "usage: dist/action.sh install|scan" >&2; exit 2 ;;
esac
