#!/usr/bin/env bash
# Install the Debian/Ubuntu packages that learntorch needs outside Python.
#
#   scripts/system_deps.sh PACKAGE...      (the Makefile's `system-deps` target calls it)
#
# A package counts as present when dpkg has it installed, or when the program it
# provides is already on PATH (so a graphviz built by hand is good enough).
# Nothing missing: do nothing, quickly -- no `apt-get update` on every `make test`.
# Missing and root: `apt-get update`, then install without recommends (small, non-interactive).
# Missing and not root: print the exact command to run and carry on; the course still
# runs, and whatever needs the package (graph drawings, browser tests) says so when used.
set -euo pipefail

# the program each package provides, for machines where dpkg does not know it
program_of() {
  case "$1" in
    graphviz) echo dot ;;
    bubblewrap) echo bwrap ;;
    chromium) echo chromium ;;
    chromium-driver) echo chromedriver ;;
    *) echo "" ;;
  esac
}

is_present() {
  local package=$1 program
  program=$(program_of "$package")
  if [ -n "$program" ] && command -v "$program" >/dev/null 2>&1; then
    return 0
  fi
  command -v dpkg-query >/dev/null 2>&1 &&
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"
}

missing=()
for package in "$@"; do
  is_present "$package" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "learntorch: these system packages are missing: ${missing[*]}" >&2
  echo "  This is not a Debian/Ubuntu system: install them with your package manager." >&2
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "learntorch: these Debian/Ubuntu packages are missing: ${missing[*]}" >&2
  echo "  Install them once with:" >&2
  echo "    sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  echo "  (continuing without them)" >&2
  exit 0
fi

echo "learntorch: installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
