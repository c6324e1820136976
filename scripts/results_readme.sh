#!/bin/sh
# results_readme.sh: a results folder's README.md, written from its runs'
# own records and nothing else.
#
#   sh scripts/results_readme.sh DIR        (scripts/results.sh calls it)
#
# Reads every DIR/*/metrics.json (and DIR/*/*/metrics.json) and writes
# DIR/README.md: the machine, the probe, the command and the date of each
# run (its "record" and "probe"; what a run does not record, the README says
# it does not), and the wall time of each. tests/test_results_readmes.c holds
# the README to this shape; results/README.md says what the files are.
set -eu
DIR=${1:?usage: results_readme.sh DIR}
[ -d "$DIR" ] || { echo "results_readme.sh: no folder $DIR" >&2; exit 1; }
DIR=$(cd "$DIR" && pwd)
rel="$(basename "$(dirname "$DIR")")/$(basename "$DIR")"
files=$(find "$DIR" -mindepth 2 -maxdepth 3 -name metrics.json | sort)
[ -n "$files" ] || { echo "results_readme.sh: no run in $DIR has a metrics.json" >&2; exit 1; }

# One line per run, tab-separated: folder, preset, seed, train s, scorecard s,
# machine, date, command, probe, trainer.
tsv=$(for f in $files; do
    run=${f#"$DIR"/}; run=${run%/metrics.json}
    awk -v run="$run" '
        # a line "  "key": value," at depth 1 (the top) or 2 (inside obj);
        # cJSON indents with tabs, json.dumps(indent=1) with spaces
        match($0, /^[ \t]+"[a-z_]+":[ \t]*/) {
            v = substr($0, RLENGTH + 1); sub(/,$/, "", v); gsub(/^"|"$/, "", v)
            k = $0; sub(/^[ \t]+"/, "", k); sub(/".*/, "", k)
            depth = match($0, /[^ \t]/) - 1
            if (depth == 1 && v == "{") { obj = k; next }
            if (depth == 1) { top[k] = v; obj = "" } else if (depth == 2 && obj != "") sub_[obj "." k] = v
            next
        }
        /^[ \t]}/ { obj = "" }
        END {
            sc = sub_["scorecard_seconds.val_mse"] + sub_["scorecard_seconds.sampling"] + sub_["scorecard_seconds.probe_fd"] + sub_["scorecard_seconds.guided_sampling"] + sub_["scorecard_seconds.ema"]
            acc = sub_["probe.test_acc"] == "" ? "test accuracy not recorded" : sprintf("test accuracy %.2f%%", 100 * sub_["probe.test_acc"])
            w = sub_["probe.weights"] == "" ? "weights not recorded" : "weights " sub_["probe.weights"]
            probe = sub_["probe.key"] == "" ? "no probe recorded" : "probe `" sub_["probe.key"] "` (" acc ", " w ")"
            impl = top["implementation"] == "" ? "" : top["implementation"] " (`tools/torch_train.py`)"
            printf "%s\t%s\t%s\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%s\n", run, top["preset"], top["seed"],
                   top["train_seconds"], sc, sub_["record.machine"], sub_["record.date"], sub_["record.command"], probe, impl
        }' "$f"
done)

# "- VALUE: run, run" for each value of one column (runs in folder order);
# "- VALUE (every run)" when they agree; MISSING for runs without it.
by_value() {
    printf '%s\n' "$tsv" | awk -F'\t' -v c="$1" -v missing="$2" '
        { v = $c == "" ? missing : $c; if (!(v in runs)) order[++n] = v; runs[v] = runs[v] (runs[v] == "" ? "" : ", ") "`" $1 "`"; total++; count[v]++ }
        END { for (i = 1; i <= n; i++) { v = order[i]; if (count[v] == total) print "- " v " (every run)"; else print "- " v ": " runs[v] } }'
}

n=$(printf '%s\n' "$tsv" | wc -l)
presets=$(printf '%s\n' "$tsv" | cut -f2 | sort -u | paste -sd, - | sed 's/,/, /g')
{
    echo "# $rel: $n runs, $presets preset"
    echo
    echo "## Machine"
    echo
    by_value 6 "not in the run's record"
    echo
    echo "## Code"
    echo
    by_value 10 "the C trainer (\`step6_ablation train\`), its build not in the run's record"
    by_value 9 "no probe recorded"
    echo
    echo "## Commands"
    echo
    if printf '%s\n' "$tsv" | awk -F'\t' '$8 != "" { found = 1 } END { exit !found }'; then
        echo '```sh'
        printf '%s\n' "$tsv" | awk -F'\t' '$8 != "" { print $8 }'
        echo '```'
        printf '%s\n' "$tsv" | awk -F'\t' '$8 == "" { r = r (r == "" ? "" : ", ") "`" $1 "`" } END { if (r != "") print "- not in the run'"'"'s record: " r }'
    else
        echo "- not in the runs' records; each run's config is in its \`metrics.json\`"
    fi
    echo
    echo "## Date"
    echo
    by_value 7 "not in the run's record"
    echo
    echo "## Wall time"
    echo
    echo "| run | seed | training steps (min, \`train_seconds\`) | scorecard (min, \`scorecard_seconds\`) |"
    echo "|---|---:|---:|---:|"
    printf '%s\n' "$tsv" | awk -F'\t' '{ printf "| %s | %s | %.1f | %.1f |\n", $1, $3, $4 / 60, $5 / 60 }'
    printf '%s\n' "$tsv" | awk -F'\t' '{ t += $4; s += $5 }
        END { printf "\n- In all: %d runs, %.0f min of training steps and %.0f min of scorecards, summed run by run\n", NR, t / 60, s / 60 }'
} > "$DIR/README.md"
echo "results_readme.sh: wrote $DIR/README.md"
