// KNOWN_OPEN: the defects the fuzzer finds that are not fixed yet — the one list of expected failures. Each entry
// matches only its own failures (its operator, its check, its mutation's family), never a whole class of checks,
// and carries a small reproducer: tests/js/fuzz.test.mjs asserts that each reproducer still fails as described,
// so an entry whose defect gets fixed fails that test until it is removed from this list.
export const KNOWN_OPEN = [];

/** The known entry a failure belongs to, or undefined. */
export const knownFor = (failure, c, env) => KNOWN_OPEN.find((k) => k.match(failure, c, env));
