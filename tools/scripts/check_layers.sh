#!/usr/bin/env bash
# tools/scripts/check_layers.sh [BUILD_DIR] - checks from the built objects that every
# call inside the library goes one way (nm: a clops_ symbol an object uses,
# undefined, is defined by another object):
# - between layers, only downward: a unit of layer L calls units of L or of a
#   layer below it. The layers, bottom first, are the folders of lib/ (docs/architecture.md,
#   "Architecture"):  core  host  store  cl  ops  api  tune
# - inside a layer, without circles: the calls between its units (its .c files)
#   form no cycle, so that each layer's units also stack (docs/architecture.md, "Layout").
# Prints each unit's calls into other layers and into units of its own layer;
# exits 1 on an upward call or a cycle (printed with the symbols that close it).
set -euo pipefail
build=${1:-build}
objdir="$build/CMakeFiles/clops.dir/lib"
[ -d "$objdir" ] || { echo "check_layers: no objects under $objdir (build first)" >&2; exit 2; }
layers=(core host store cl ops api tune)
rank() { local i; for i in "${!layers[@]}"; do [ "${layers[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }
unit_of() { echo "$(basename "$(dirname "$1")")/$(basename "$1" .c.o)"; }

defs=$(mktemp)
edges=$(mktemp)
trap 'rm -f "$defs" "$edges"' EXIT
# symbol unit (layer/file), for every clops_ symbol an object defines
for o in $(find "$objdir" -name '*.o' | sort); do
  nm --defined-only "$o" | awk -v u="$(unit_of "$o")" '$3 ~ /^clops_/ && $2 ~ /[TDRBC]/ {print $3, u}'
done | sort -u >"$defs"

bad=0
for o in $(find "$objdir" -name '*.o' | sort); do
  unit=$(unit_of "$o")
  layer=${unit%%/*}
  r=$(rank "$layer")
  if [ "$r" -lt 0 ]; then echo "check_layers: $o is in no layer (lib/$layer)" >&2; bad=1; continue; fi
  calls=""
  within=""
  for sym in $(nm --undefined-only "$o" | awk '$2 ~ /^clops_/ {print $2}'); do
    tu=$(awk -v s="$sym" '$1 == s {print $2; exit}' "$defs")
    [ -n "$tu" ] || continue
    to=${tu%%/*}
    if [ "$to" = "$layer" ]; then
      [ "$tu" = "$unit" ] && continue
      echo "$unit $tu $sym" >>"$edges"
      within+=" ${tu#*/}"
      continue
    fi
    if [ "$(rank "$to")" -gt "$r" ]; then
      echo "UPWARD: lib/$unit.c calls $sym (lib/$tu.c)"
      bad=1
    fi
    calls+=" $to"
  done
  echo "$unit:$(echo "$calls" | tr ' ' '\n' | sort -u | tr '\n' ' ')| within:$(echo "$within" | tr ' ' '\n' | sort -u | tr '\n' ' ')"
done
[ "$bad" -eq 0 ] && echo "check_layers: no upward calls among ${#layers[@]} layers" || echo "check_layers: upward calls found" >&2

# Cycles among the units of each layer: every elementary cycle of the unit call
# graph, once, from its first unit (in object order) round to it, with the
# symbol each step calls (simple paths back to the start through later units
# only; the graph has a few dozen edges).
units=$(find "$objdir" -name '*.o' | sort | while read -r o; do unit_of "$o"; done | tr '\n' ' ')
cycles=$(sort -u "$edges" | awk -v units="$units" '
  { key = $1 SUBSEP $2; if (!(key in sym)) { sym[key] = $3; out[$1] = out[$1] " " $2 } }
  function name(u) { return substr(u, index(u, "/") + 1) }
  function walk(s, u, line,    n, vs, i, v) {
    n = split(out[u], vs, " ")
    for (i = 1; i <= n && found < 100; i++) {
      v = vs[i]
      if (v == s) { print "CYCLE in lib/" substr(s, 1, index(s, "/") - 1) ": " line " -> " name(v) " (" sym[u, v] ")"; found++ }
      else if (idx[v] > idx[s] && !onpath[v]) {
        onpath[v] = 1
        walk(s, v, line " -> " name(v) " (" sym[u, v] ")")
        onpath[v] = 0
      }
    }
  }
  END {
    n = split(units, us, " ")
    for (i = 1; i <= n; i++) idx[us[i]] = i
    for (i = 1; i <= n; i++) walk(us[i], us[i], name(us[i]))
  }')
if [ -n "$cycles" ]; then
  echo "$cycles"
  echo "check_layers: calls in circles inside a layer ($(echo "$cycles" | wc -l) found)" >&2
  bad=1
else
  echo "check_layers: no cycle among the units of any layer ($(sort -u "$edges" | awk '{print $1, $2}' | sort -u | wc -l) calls between units)"
fi
exit "$bad"
