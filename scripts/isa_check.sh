#!/bin/sh
# isa_check.sh: make isa-check (mk/isa.mk). The golden and layer tests as
# other x86-64 machines run them, all on this one:
#
#   sh scripts/isa_check.sh BUILD      (MAKE and ISA_OPT from make)
#
# - built again for each instruction-set level and vector width below (the
#   compiler's loops), each in BUILD/isa/<build>/, and beside them the
#   build `make check` runs (-march=native); a level this CPU lacks is skipped;
# - each build run with every kernel family of oneDNN's sgemm this CPU has
#   (the model's products, common/nn/matmul.c; DNNL_MAX_CPU_ISA caps it);
# - the native build's golden and parity tests run with every kernel
#   OpenBLAS offers here (OPENBLAS_CORETYPE), against its own choice, and
#   the OpenBLAS routines the four programs call listed (nm).
# Prints one row per run: the smallest margin, tolerance / worst error
# (below 1 a check fails), of the golden files (golden_check), the layer
# parity files (test_parity), the layers' gradient checks (test_layers) and
# the whole model's (test_model grads), then each golden file's smallest
# margin over all runs. Each run's whole output: BUILD/isa/<build>/<run>.txt,
# the table: BUILD/isa/table.txt. Exit 1 if a test failed in any run.
[ $# -eq 1 ] || { sed -n 5p "$0" | sed 's/^# *//' >&2; exit 2; }
BUILD=$1
: "${MAKE:=make}" "${ISA_OPT:=-O3 -ffp-contract=fast -fno-trapping-math}"
unset OPENBLAS_CORETYPE DNNL_MAX_CPU_ISA ONEDNN_MAX_CPU_ISA   # each run sets its own
OUT=$BUILD/isa
mkdir -p "$OUT" || exit 1
# make's -j reaches the builds through MAKEFLAGS; without one, every core
jobs=; case " ${MAKEFLAGS:-} " in *" -j"*|*--jobserver*) ;; *) jobs=-j$(nproc) ;; esac

# The levels this CPU runs, as the dynamic loader reports them.
levels=$(/lib64/ld-linux-x86-64.so.2 --help 2>/dev/null | awk '/x86-64-v[0-9] \(supported/ { print $1 }')
has_level() { echo "$levels" | grep -qx "$1"; }

# The builds: name, level, the compiler's flags for the CPU (v4-256 is what
# gcc's -march=native gives on Intel's AVX-512 CPUs: 512-bit registers, loops
# in 256-bit ones).
BUILDS="v2 x86-64-v2 -march=x86-64-v2
v3-128 x86-64-v3 -march=x86-64-v3 -mprefer-vector-width=128
v3-256 x86-64-v3 -march=x86-64-v3 -mprefer-vector-width=256
v4-256 x86-64-v4 -march=x86-64-v4 -mprefer-vector-width=256
v4-512 x86-64-v4 -march=x86-64-v4 -mprefer-vector-width=512"
# oneDNN's sgemm kernel families, oldest first (the later AVX-512 ones,
# VNNI, BF16, AMX, run the same float kernels as avx512_core).
DNNL_FAMILIES="SSE41 AVX AVX2 AVX512_CORE"
# OpenBLAS's kernels (each name it knows that is not another's alias).
BLAS_KERNELS="Prescott Core2 Penryn Dunnington Nehalem Atom Nano Opteron Opteron_SSE3 Barcelona Bobcat
Sandybridge Bulldozer Piledriver Steamroller Excavator Haswell Zen SkylakeX Cooperlake"

# run BIN_DIR LOG [VAR=value...]: the four programs, output into LOG;
# prints the row's margins.
run() {
    bin=$1 log=$2; shift 2
    : > "$log"
    bad=
    env "$@" "$bin/golden_check" tests/golden >> "$log" 2>&1 || bad="$bad golden_check"
    env "$@" "$bin/test_parity" >> "$log" 2>&1 || bad="$bad test_parity"
    env "$@" "$bin/test_layers" >> "$log" 2>&1 || bad="$bad test_layers"
    env "$@" CK_RUN_CASE=grads "$bin/test_model" >> "$log" 2>&1 || bad="$bad test_model"
    awk -v bad="$bad" '
        function fmt(m) { return m < 10 ? sprintf("%.1f", m) : sprintf("%.0f", m) }
        function keep(k, m, where) { if (!(k in low) || m < low[k]) { low[k] = m; at[k] = where } }
        /^kernels: / { isa = $0; sub(/^kernels: oneDNN [^,]*, dnnl_sgemm, (cpu_isa_)?/, "", isa); sub(/ .*/, "", isa) }
        $1 ~ /\.safetensors$/ && ($NF == "ok" || $NF == "MISS") {
            f = $1; sub(/\.safetensors$/, "", f); check = $9; for (i = 10; i < NF; i++) check = check " " $i
            sub(/ at step /, "@", check); keep("golden", $8, f " " check) }
        $1 ~ /\.safetensors$/ && $2 == "ERROR:" { keep("golden", 0, $1 " ERROR") }
        / ours vs .*margin / { name = $0; sub(/ +ours vs.*/, "", name); keep("parity", $NF, name) }
        /^grad check .*margin / { name = $0; sub(/^grad check /, "", name); sub(/ +worst error.*/, "", name); keep("layers", $NF, name) }
        /^model grad check .*margin / { name = $4; sub(/:$/, "", name); keep("model", $NF, name) }
        END {
            printf "%-16s", isa
            n = split("golden parity layers model", k, " "); split("26 24 22 18", width, " ")
            for (i = 1; i <= n; i++) {
                cell = (k[i] in low) ? fmt(low[k[i]]) " " at[k[i]] : "-"
                printf " %-" width[i] "s", substr(cell, 1, width[i]) }
            printf " %s\n", bad == "" ? "pass" : "FAIL:" bad }' "$log"
}

# The oneDNN kernel family a build runs by its own choice (its first line).
family_of() {
    case $("$1/golden_check" tests/golden 2>/dev/null | sed -n 's/^kernels: oneDNN [^,]*, dnnl_sgemm, \(cpu_isa_\)\{0,1\}\([a-z0-9_]*\) kernels.*/\2/p') in
        avx512_core*) echo AVX512_CORE ;; avx2*) echo AVX2 ;; avx*) echo AVX ;; *) echo SSE41 ;;
    esac
}
# A build's runs: oneDNN's own choice, then each family below it.
runs_of() {
    name=$1 bin=$2 own=$(family_of "$2")
    mkdir -p "$OUT/$name"
    printf '%-8s ' "$name"; run "$bin" "$OUT/$name/own.txt"
    for fam in $DNNL_FAMILIES; do
        [ "$fam" != "$own" ] || break
        lower=$(echo "$fam" | tr 'A-Z' 'a-z')
        printf '%-8s ' "$name"; run "$bin" "$OUT/$name/$lower.txt" DNNL_MAX_CPU_ISA=$fam
    done
}

{
echo "make isa-check: margins, tolerance / worst error (below 1 fails), the smallest of each test and where;"
echo "  builds: -march=native (make check's) and the levels below; products: oneDNN's sgemm at each kernel family"
echo "  this CPU has (DNNL_MAX_CPU_ISA); each run's whole output in $OUT/<build>/<run>.txt"
[ -n "$levels" ] || echo "  (the dynamic loader does not say which levels this CPU runs: only the native build)"
printf '%-8s %-16s %-26s %-24s %-22s %-18s %s\n' build "oneDNN kernels" "golden files" "layer parity" \
    "layers' grad checks" "model grad check" tests
runs_of native "$BUILD/tests"
echo "$BUILDS" | while read -r name level flags; do
    if ! has_level "$level"; then
        printf '%-8s %s\n' "$name" "skipped: this CPU does not run $level (the dynamic loader lists: $(echo $levels))"
        continue
    fi
    dir=$OUT/$name
    if ! $MAKE --no-print-directory -s $jobs BUILD="$dir" OPT="$ISA_OPT $flags" isa-programs > "$dir.build.txt" 2>&1; then
        printf '%-8s %s\n' "$name" "FAIL: the build ($flags) failed; see $dir.build.txt"
        continue
    fi
    runs_of "$name" "$dir/bin"
done

# OpenBLAS: which of its routines the programs call (the model's products
# are oneDNN's), then the golden and parity tests with each of its kernels
# against its own choice.
echo
calls=$(for p in golden_check test_parity test_layers test_model; do nm -u "$BUILD/tests/$p"; done |
        awk '{ print $NF }' | grep -iE '^(cblas_|lapacke_|openblas_|[sdcz]gemm)' | sort -u | tr '\n' ' ')
echo "the OpenBLAS routines the four programs call (nm -u): ${calls:-none}; with each of its kernels (OPENBLAS_CORETYPE),"
echo "native build, golden_check and test_parity: the same output as with OpenBLAS's own choice?"
blas_run() {   # LOG [VAR=value]: the two programs, but the lines that name the kernels
    env ${2:+"$2"} "$BUILD/tests/golden_check" tests/golden > "$1" 2>&1
    env ${2:+"$2"} "$BUILD/tests/test_parity" >> "$1" 2>&1
    grep -v '^kernels: ' "$1" > "$1.body"
}
blas_run "$OUT/native/blas_own.txt"
same=
for k in $BLAS_KERNELS; do
    log=$OUT/native/blas_$k.txt
    blas_run "$log" OPENBLAS_CORETYPE=$k
    got=$(sed -n 's/^kernels: .*OpenBLAS [^,]*, its \([A-Za-z0-9_]*\) kernels.*/\1/p' "$log")
    if [ "$got" != "$k" ]; then echo "  $k: OpenBLAS ran its $got kernels instead"
    elif cmp -s "$log.body" "$OUT/native/blas_own.txt.body"; then same="$same $k"
    else echo "  $k: FAIL: not the same output (diff $log $OUT/native/blas_own.txt)"
    fi
done
echo "  bit for bit the same:${same:- none}"

# Each golden file's smallest margin over every run, and where.
echo
echo "each golden file's smallest margin over all the runs above, and in which run:"
for log in "$OUT"/*/*.txt; do
    case $log in */blas_*) continue ;; esac   # the same as own.txt (above)
    run=${log#$OUT/}; run=${run%.txt}; run="${run%/*} build, oneDNN ${run#*/}"
    case $run in *own) run="$run choice" ;; esac
    awk -v run="$run" '$1 ~ /\.safetensors$/ && ($NF == "ok" || $NF == "MISS") {
        check = $9; for (i = 10; i < NF; i++) check = check " " $i; print $1, $8, run ": " check }' "$log"
done | sort -k1,1 -k2,2g | awk '$1 != last { printf "  %-28s %6s  %s\n", $1, $2, substr($0, index($0, $3)); last = $1 }'
} | tee "$OUT/table.txt"
if grep -q "FAIL" "$OUT/table.txt"; then echo "make isa-check: FAILED (see above)"; exit 1; fi
echo "make isa-check: OK, every test passed in every run"
