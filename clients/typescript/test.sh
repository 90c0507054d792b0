#!/usr/bin/env bash
# Installs the dev dependencies from the lock file, builds and tests the
# TypeScript client. Run from anywhere; needs Node 20+ and npm.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
npm run build
npm test
