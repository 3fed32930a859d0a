#!/usr/bin/env bash
# tools/check_layers.sh [BUILD_DIR] - checks from the built objects that the
# library's layers only call downward: every clops_ symbol an object of layer L
# uses (nm: undefined) must be defined by an object of L or of a layer below it.
# The layers, bottom first, are the folders of lib/ (README, "Architecture"):
#   core  host  store  cl  ops  api  tune
# Prints each layer's calls into other layers; exits 1 on an upward call.
set -euo pipefail
build=${1:-build}
objdir="$build/CMakeFiles/clops.dir/lib"
[ -d "$objdir" ] || { echo "check_layers: no objects under $objdir (build first)" >&2; exit 2; }
layers=(core host store cl ops api tune)
rank() { local i; for i in "${!layers[@]}"; do [ "${layers[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }

defs=$(mktemp)
trap 'rm -f "$defs"' EXIT
# symbol layer, for every clops_ symbol an object defines
for o in $(find "$objdir" -name '*.o' | sort); do
  layer=$(basename "$(dirname "$o")")
  nm --defined-only "$o" | awk -v l="$layer" '$3 ~ /^clops_/ && $2 ~ /[TDRBC]/ {print $3, l}'
done | sort -u >"$defs"

bad=0
for o in $(find "$objdir" -name '*.o' | sort); do
  layer=$(basename "$(dirname "$o")")
  r=$(rank "$layer")
  if [ "$r" -lt 0 ]; then echo "check_layers: $o is in no layer (lib/$layer)" >&2; bad=1; continue; fi
  calls=""
  for sym in $(nm --undefined-only "$o" | awk '$2 ~ /^clops_/ {print $2}'); do
    to=$(awk -v s="$sym" '$1 == s {print $2}' "$defs")
    [ -n "$to" ] || continue
    [ "$to" = "$layer" ] && continue
    if [ "$(rank "$to")" -gt "$r" ]; then
      echo "UPWARD: lib/$layer/$(basename "$o" .c.o).c calls $sym (lib/$to)"
      bad=1
    fi
    calls+=" $to"
  done
  echo "$layer/$(basename "$o" .c.o):$(echo "$calls" | tr ' ' '\n' | sort -u | tr '\n' ' ')"
done
[ "$bad" -eq 0 ] && echo "check_layers: no upward calls among ${#layers[@]} layers" || echo "check_layers: upward calls found" >&2
exit "$bad"
