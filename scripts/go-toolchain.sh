# Sourced by scripts/test.sh when the machine has no `go`: puts Go on PATH from the Go module
# proxy, the same toolchain module the go command itself fetches for a GOTOOLCHAIN switch
# (golang.org/toolchain), pinned by version and by the sha256 of the zip. Unpacked once under
# .cache/ (ignored, kept between runs like the Go module and build caches).
#
#   bash scripts/go-toolchain.sh    # alone: install if needed, then print `go version`
go_toolchain_version=1.26.8
go_toolchain_zip_sha256=30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7

go_toolchain_install() {
  local root dir proxy url tmp
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  dir=$root/.cache/go-toolchain/go$go_toolchain_version
  if [ ! -x "$dir/bin/go" ]; then
    [ "$(uname -s)/$(uname -m)" = Linux/x86_64 ] || {
      echo "no go on PATH, and the pinned toolchain is linux-amd64 only; install Go $go_toolchain_version" >&2
      return 1
    }
    command -v unzip >/dev/null || {
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq unzip >/dev/null
    }
    # GOPROXY's first entry when it names a proxy (a mirror the machine is configured for).
    proxy=${GOPROXY:-https://proxy.golang.org}
    proxy=${proxy%%[,|]*}
    case $proxy in http://* | https://*) ;; *) proxy=https://proxy.golang.org ;; esac
    url=${proxy%/}/golang.org/toolchain/@v/v0.0.1-go$go_toolchain_version.linux-amd64.zip
    tmp=$(mktemp -d)
    echo "installing Go $go_toolchain_version from the Go module proxy"
    curl -sSfL --retry 3 -o "$tmp/go.zip" "$url" &&
      echo "$go_toolchain_zip_sha256  $tmp/go.zip" | sha256sum -c --quiet - &&
      unzip -q "$tmp/go.zip" -d "$tmp/unpacked" || {
      echo "could not install Go $go_toolchain_version from $url" >&2
      rm -rf "$tmp"
      return 1
    }
    mkdir -p "$(dirname "$dir")"
    rm -rf "$dir"
    mv "$tmp/unpacked/golang.org/toolchain@v0.0.1-go$go_toolchain_version.linux-amd64" "$dir" || return 1
    rm -rf "$tmp"
  fi
  # The binary finds its GOROOT from its own path; a stale GOROOT from the environment would win.
  unset GOROOT
  export PATH=$dir/bin:$PATH
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  go_toolchain_install
  go version
else
  go_toolchain_install
fi
