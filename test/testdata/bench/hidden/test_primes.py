# testfirst-canary: tfc-bench00000000cafe
# A suite of about two seconds on one core of the project's machine (Debian's
# Python 3.11): the benchmark compares grading it sealed with running it bare.
import pytest

from primes import nth_prime, primes_below


@pytest.mark.parametrize("n", range(10))
def test_sieve_counts(n):
    limit = 1_000_000 + n
    assert len(primes_below(limit)) == sum(1 for _ in primes_below(limit))


@pytest.mark.parametrize("k,want", [(10000, 104729), (14000, 151703), (18000, 200183), (20000, 224737), (22000, 249439)])
def test_nth_prime(k, want):
    assert nth_prime(k) == want


def test_small():
    assert primes_below(20) == [2, 3, 5, 7, 11, 13, 17, 19]
