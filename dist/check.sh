#!/usr/bin/env bash
# dist/check.sh OUTDIR: the install test of the artifacts dist/build.sh wrote into OUTDIR.
# Each is installed into a clean place, with no cargo on PATH (`env -i` and a minimal
# PATH), and exercised by dist/exercise.sh (--version, grep, edit/apply/undo with the
# bytes on disk checked, and for the wheel `git astedit --help` through man-db):
#
#   wheel        a fresh virtual environment, `pip install --no-index WHEEL`
#   archive      the release archive, its .sha256 checked, unpacked
#   npm-global   `npm i -g` of the two tarballs into a temporary prefix (postinstall runs)
#   npm-noscript the same with --ignore-scripts (the launcher runs the binary)
#   npm-local    a project with both as devDependencies, `npx git-astedit`
#   pnpm         the same project installed by pnpm, whose default blocks install scripts
#                (skipped, and said so, when pnpm is not on PATH)
#
# Exits non-zero when any check failed, after running them all; prints what failed.
set -uo pipefail

if [ $# -ne 1 ]; then
    echo "usage: dist/check.sh OUTDIR" >&2
    exit 2
fi
OUT=$(cd "$1" && pwd) || exit 2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VERSION=$(sed -n 's/^version = "\([^"]*\)"$/\1/p' "$ROOT/Cargo.toml" | head -n1)
TARGET=x86_64-unknown-linux-gnu
WORK=$(mktemp -d "${TMPDIR:-/tmp}/astedit-check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# What every check's environment starts from: no cargo, no user configuration.
SYSTEM_PATH=/usr/local/bin:/usr/bin:/bin
NODE_DIR=$(dirname "$(command -v node)")
FAILURES=()

# clean LABEL PATH-PREFIX CMD...: CMD in an empty environment whose PATH is
# PATH-PREFIX and the system's folders (and node's, for the npm cases).
clean() {
    local label=$1 prefix=$2
    shift 2
    mkdir -p "$WORK/home-$label" "$WORK/tmp"
    env -i HOME="$WORK/home-$label" TMPDIR="$WORK/tmp" LANG=C.UTF-8 TERM=dumb \
        PATH="${prefix:+$prefix:}$SYSTEM_PATH:$NODE_DIR" GIT_ASTEDIT_VERSION="$VERSION" \
        npm_config_cache="$WORK/npm-cache" npm_config_update_notifier=false \
        npm_config_fund=false npm_config_audit=false \
        GIT_CONFIG_NOSYSTEM=1 "$@"
}

exercise() {
    local label=$1 prefix=$2
    shift 2
    echo
    echo "== $label"
    if clean "$label" "$prefix" "$@" bash "$ROOT/dist/exercise.sh" "$label" ${MAN_FLAG:-}; then
        :
    else
        FAILURES+=("$label")
    fi
}

failed() {
    printf 'FAIL [%s] %s\n' "$1" "$2" >&2
    FAILURES+=("$1")
}

seconds() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(seconds)" 'BEGIN { printf "%.1f", b - a }'; }

shopt -s nullglob
wheels=("$OUT"/git_astedit-"$VERSION"-*.whl)
main_tgz="$OUT/git-astedit-$VERSION.tgz"
platform_tgz="$OUT/git-astedit-linux-x64-gnu-$VERSION.tgz"
archive="$OUT/git-astedit-$VERSION-$TARGET.tar.gz"

# --- the wheel --------------------------------------------------------------------
if [ ${#wheels[@]} -ne 1 ]; then
    failed wheel "expected one wheel git_astedit-$VERSION-*.whl in $OUT, found ${#wheels[@]}"
else
    wheel=${wheels[0]}
    echo "== wheel: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"
    case "$(basename "$wheel")" in
        *-py3-none-manylinux_2_*_x86_64*.whl) ;;
        *) failed wheel "unexpected wheel tag: $(basename "$wheel")" ;;
    esac
    python3 -m venv "$WORK/venv" || failed wheel "python3 -m venv"
    start=$(seconds)
    if clean wheel "$WORK/venv/bin" "$WORK/venv/bin/python" -m pip install -q \
        --no-index --disable-pip-version-check "$wheel"; then
        echo "pip install of the local wheel: $(elapsed "$start") s"
        for f in share/man/man1/git-astedit.1 share/man/man1/git-astedit-grep.1 \
            share/bash-completion/completions/git-astedit share/zsh/site-functions/_git-astedit \
            share/fish/vendor_completions.d/git-astedit.fish; do
            [ -s "$WORK/venv/$f" ] || failed wheel "the venv has no $f"
        done
        if readelf -S "$WORK/venv/bin/git-astedit" | grep -q '\.symtab'; then
            failed wheel "the wheel's binary is not stripped"
        fi
        MAN_FLAG=--man exercise wheel "$WORK/venv/bin" MAN_PREFIX="$WORK/venv/"
    else
        failed wheel "pip install $wheel"
    fi
fi

# --- the release archive ----------------------------------------------------------
if [ ! -f "$archive" ]; then
    failed archive "no $archive"
else
    echo
    echo "== archive: $(basename "$archive") ($(du -k "$archive" | cut -f1) KiB)"
    (cd "$OUT" && sha256sum --quiet -c "$(basename "$archive").sha256") || failed archive "sha256 mismatch"
    mkdir -p "$WORK/archive"
    tar -xzf "$archive" -C "$WORK/archive" || failed archive "tar -xzf"
    dir="$WORK/archive/git-astedit-$VERSION-$TARGET"
    for f in git-astedit README.md LICENSE man/man1/git-astedit.1 completions/git-astedit.bash \
        completions/git-astedit.zsh completions/git-astedit.fish; do
        [ -e "$dir/$f" ] || failed archive "the archive has no $f"
    done
    # Installed as a user would: the binary into PREFIX/bin, the pages into
    # PREFIX/share/man (man-db finds them beside PATH's PREFIX/bin).
    mkdir -p "$WORK/archive-prefix/bin" "$WORK/archive-prefix/share/man"
    cp "$dir/git-astedit" "$WORK/archive-prefix/bin/"
    cp -R "$dir/man/man1" "$WORK/archive-prefix/share/man/"
    MAN_FLAG=--man exercise archive "$WORK/archive-prefix/bin" MAN_PREFIX="$WORK/archive-prefix/"
fi

# --- npm --------------------------------------------------------------------------
# Local tarballs only: the other platforms' optional dependencies are not published
# yet (and need not be fetched), so these installs run offline.
if [ ! -f "$main_tgz" ] || [ ! -f "$platform_tgz" ]; then
    failed npm "no $main_tgz or $platform_tgz"
else
    # is_launcher FILE: whether FILE is the node launcher (not the linked binary).
    is_launcher() { head -c 20 "$1" | grep -q '^#!/usr/bin/env node'; }

    # Global install, scripts allowed (npm's default runs them): postinstall links the
    # binary in place of the launcher.
    echo
    echo "== npm-global: npm i -g into a temporary prefix"
    prefix="$WORK/npm-global"
    start=$(seconds)
    if clean npm-global "$prefix/bin" npm install -g --offline --no-audit --no-fund \
        --prefix "$prefix" --allow-scripts=git-astedit "$platform_tgz" "$main_tgz" >"$WORK/npm-global.log" 2>&1; then
        echo "npm i -g: $(elapsed "$start") s"
        bin="$prefix/lib/node_modules/git-astedit/bin/git-astedit"
        if is_launcher "$bin"; then
            failed npm-global "postinstall did not put the binary in place of the launcher"
            cat "$WORK/npm-global.log" >&2
        else
            echo "postinstall linked the binary in place of the launcher"
        fi
        [ -s "$prefix/share/man/man1/git-astedit.1" ] || failed npm-global "no man page in $prefix/share/man/man1"
        MAN_FLAG=--man exercise npm-global "$prefix/bin" MAN_PREFIX="$prefix/"
    else
        cat "$WORK/npm-global.log" >&2
        failed npm-global "npm install -g"
    fi

    # Global install with install scripts blocked: the launcher runs the binary.
    echo
    echo "== npm-noscript: npm i -g --ignore-scripts"
    prefix="$WORK/npm-noscript"
    if clean npm-noscript "$prefix/bin" npm install -g --offline --ignore-scripts --no-audit --no-fund \
        --prefix "$prefix" "$platform_tgz" "$main_tgz" >"$WORK/npm-noscript.log" 2>&1; then
        is_launcher "$prefix/lib/node_modules/git-astedit/bin/git-astedit" ||
            failed npm-noscript "bin/git-astedit is not the launcher though scripts were blocked"
        exercise npm-noscript "$prefix/bin"
    else
        cat "$WORK/npm-noscript.log" >&2
        failed npm-noscript "npm install -g --ignore-scripts"
    fi

    # A project-local devDependency, run with npx.
    project() {
        mkdir -p "$1"
        cp "$main_tgz" "$platform_tgz" "$1/"
        cat >"$1/package.json" <<EOF
{
  "name": "astedit-check-project",
  "version": "1.0.0",
  "private": true,
  "devDependencies": {
    "@git-astedit/linux-x64-gnu": "file:./$(basename "$platform_tgz")",
    "git-astedit": "file:./$(basename "$main_tgz")"
  }
}
EOF
    }
    echo
    echo "== npm-local: a devDependency, npx git-astedit"
    dir="$WORK/npm-local"
    project "$dir"
    if (cd "$dir" && clean npm-local "" npm install --offline --no-audit --no-fund >"$WORK/npm-local.log" 2>&1); then
        got=$(cd "$dir" && clean npm-local "" npx --offline --no-install git-astedit --version 2>&1)
        [ "$got" = "git-astedit $VERSION" ] && echo "npx git-astedit --version: $got" ||
            failed npm-local "npx git-astedit --version: $got"
        exercise npm-local "$dir/node_modules/.bin"
    else
        cat "$WORK/npm-local.log" >&2
        failed npm-local "npm install (devDependency)"
    fi

    # pnpm: install scripts are blocked unless approved (`pnpm approve-builds`), so the
    # launcher must do. pnpm 11 and later also fail the install over an unapproved
    # script unless strict-dep-builds is off: the user's choice, made here by the flag.
    echo
    echo "== pnpm: a devDependency, install scripts blocked (pnpm's default)"
    pnpm_bin=$(command -v pnpm || true)
    if [ -z "$pnpm_bin" ]; then
        echo "SKIP [pnpm] pnpm is not on PATH (npm i -g pnpm installs it)"
    else
        dir="$WORK/pnpm"
        project "$dir"
        pnpm_dir=$(dirname "$pnpm_bin")
        if (cd "$dir" && clean pnpm "$pnpm_dir" pnpm install --offline --config.store-dir="$WORK/pnpm-store" --config.strict-dep-builds=false \
            >"$WORK/pnpm.log" 2>&1); then
            is_launcher "$dir/node_modules/git-astedit/bin/git-astedit" ||
                failed pnpm "bin/git-astedit is not the launcher: pnpm ran postinstall"
            got=$(cd "$dir" && clean pnpm "$pnpm_dir" pnpm exec git-astedit --version 2>&1)
            [ "$got" = "git-astedit $VERSION" ] && echo "pnpm exec git-astedit --version: $got" ||
                failed pnpm "pnpm exec git-astedit --version: $got"
            exercise pnpm "$dir/node_modules/.bin"
        else
            cat "$WORK/pnpm.log" >&2
            failed pnpm "pnpm install"
        fi
    fi
fi

echo
if [ ${#FAILURES[@]} -ne 0 ]; then
    echo "check.sh: FAILED: ${FAILURES[*]}" >&2
    exit 1
fi
echo "check.sh: every artifact installed and worked"
