# mk/check_summary.awk: the end of `make check`, from the lines the test
# programs added to its log (tests/testutil.h): "ran N failed F" per program,
# "skipped test|part WHAT (needs X): WHY" per check that could not run.
# Prints each skip and why, then one line: programs, tests ran, passed,
# failed and skipped.
$1 == "ran" { ran += $2; fails += $4 }
$1 == "skipped" {
    if ($2 == "test") whole++; else part++
    print "  " $0
}
END {
    nfailed = split(failed, f, " ")
    printf "make check: %s: %d test programs (%d failed%s); %d tests ran: %d passed, %d failed, %d skipped; %d part%s of a test skipped\n",
        nfailed ? "FAILED" : "OK", programs, nfailed, nfailed ? ":" failed : "",
        ran, ran - fails - whole, fails, whole, part, part == 1 ? "" : "s"
}
