#!/usr/bin/env bash
# Installs every Debian package the build, the tests and the benchmarks need.
#   utils/install-deps.sh           install what is missing (as root, or
#                                   through sudo)
#   utils/install-deps.sh --check   install nothing: list what is missing and
#                                   exit 1 if anything is
# Idempotent: does nothing (not even `apt-get update`) when all are present.
# For Debian 12.
set -euo pipefail

PACKAGES=(
  build-essential cmake git python3
  re2c bison
  protobuf-c-compiler libprotobuf-c-dev libonnx-dev libonnx-testdata
  python3-onnx python3-numpy
  graphviz libgraphviz-dev
  # gcc -m32: gcc-12-multilib, not the gcc-multilib metapackage, which
  # conflicts with the cross compilers below
  clang llvm-14-tools libclang-rt-14-dev gcc-12-multilib
  mlir-14-tools
  libopenblas-dev
  pkg-config groff-base
  # test/cross: C bundles built for other architectures, run under qemu-user;
  # the targets' C libraries and headers by name (the compilers only
  # recommend them, and --no-install-recommends below skips them)
  gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf gcc-riscv64-linux-gnu qemu-user
  libc6-dev-arm64-cross libc6-dev-armhf-cross libc6-dev-riscv64-cross
  # training: Fashion-MNIST (IDX files, gzip) and zlib to read them
  dataset-fashion-mnist zlib1g-dev
  # -backend=opencl: the ICD loader, headers and PoCL's CPU device
  ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo
)

check_only=0
case "${1:-}" in
  "") ;;
  --check) check_only=1 ;;
  *) echo "install-deps: error: unknown option '$1' (usage: utils/install-deps.sh [--check])" >&2; exit 1 ;;
esac

if ! command -v dpkg-query > /dev/null; then
  echo "install-deps: error: dpkg-query not found: this script knows Debian's package names;" \
       "install the equivalents of: ${PACKAGES[*]}" >&2
  exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

if [ "$check_only" -eq 1 ]; then
  echo "install-deps: missing ${#missing[@]} of ${#PACKAGES[@]} packages: ${missing[*]}" >&2
  echo "install-deps: install them with: sudo apt-get install ${missing[*]}" \
       "(or run utils/install-deps.sh as root)" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
