"""A deliberately plain prime sieve: the benchmark's code under test."""


def primes_below(n):
    """Return the primes below n."""
    sieve = [True] * max(n, 2)
    sieve[0] = sieve[1] = False
    for i in range(2, int(n ** 0.5) + 1):
        if sieve[i]:
            for j in range(i * i, n, i):
                sieve[j] = False
    return [i for i, p in enumerate(sieve) if p]


def nth_prime(k):
    """Return the k-th prime, counting from 1, by trial division."""
    count, candidate = 0, 1
    while count < k:
        candidate += 1
        if all(candidate % d for d in range(2, int(candidate ** 0.5) + 1)):
            count += 1
    return candidate
