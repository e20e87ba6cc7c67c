#!/bin/sh
# Builds taskgate's runtime tree: the built packages the `taskgate` command needs and their production
# dependencies only, exactly as the lockfile pins them. The image's build stage runs it, and so does
# test/deploy/image.test.ts (from a copy of the sources), so the tested tree and the image cannot drift.
# Usage: sh deploy/docker/build-runtime.sh <source-dir> <runtime-dir>
set -eu
src=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
# The workspaces `taskgate` runs from (the CLI and what it imports); the others are only for development.
runtime="protocol core worker gateway bridge examples cli console dev-redis"
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 npm_config_update_notifier=false

cd "$src"
npm ci --no-audit --no-fund
npx turbo run build --filter=@taskgate/cli... --output-logs=errors-only

# Every workspace's package.json (npm ci checks them against the lockfile), but only the runtime
# workspaces' published files (package.json "files": their built dist/ and the like).
cp package.json package-lock.json "$out/"
for dir in packages/* test/harness; do
  mkdir -p "$out/$dir"
  cp "$dir/package.json" "$out/$dir/"
done
for name in $runtime; do
  for entry in $(node -p "require('./packages/$name/package.json').files.join(' ')"); do
    cp -R "packages/$name/$entry" "$out/packages/$name/"
  done
done

cd "$out"
workspaces=""
for name in $runtime; do workspaces="$workspaces --workspace=@taskgate/$name"; done
# shellcheck disable=SC2086 # one flag per word
npm ci --omit=dev --include-workspace-root=false --no-audit --no-fund $workspaces
# The development-only workspaces were needed for npm ci's lockfile check only.
rm -rf packages/conformance-fixture test node_modules/@taskgate/conformance-fixture node_modules/@taskgate/test-harness
# TypeScript is an optional peer of valibot (bull-board's, types only): the root's devDependency on it makes it
# "devOptional" in the lockfile, which --omit=dev keeps. Nothing loads it at run time.
rm -rf node_modules/typescript node_modules/.bin/tsc node_modules/.bin/tsserver
find packages -name '*.tsbuildinfo' -delete
# `taskgate` on PATH: bin/taskgate is the CLI's bin.
mkdir -p bin
ln -sf ../packages/cli/bin/taskgate.js bin/taskgate
