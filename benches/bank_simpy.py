"""The reneging bank in SimPy: an independent implementation of examples/src/bank.rs.

Poisson arrivals (2.5 per minute), 3 tellers, exponential service (mean 1 minute) and
patience (mean 2 minutes). Reports, over independent replications, the mean wait of the
customers served, the fraction who reneged, the time-average line length and the teller
utilisation, each with a 95 % Student-t confidence interval.

    python3 benches/bank_simpy.py [REPLICATIONS] [MINUTES]
"""

import math
import random
import statistics
import sys

import simpy

ARRIVAL_RATE = 2.5
TELLERS = 3
MEAN_SERVICE = 1.0
MEAN_PATIENCE = 2.0


def replication(seed, horizon):
    rng = random.Random(seed)
    env = simpy.Environment()
    tellers = simpy.Resource(env, capacity=TELLERS)
    stats = {"arrived": 0, "reneged": 0, "waits": [], "line_area": 0.0, "busy_area": 0.0}
    level = {"line": 0, "busy": 0, "since": 0.0}

    def account():
        # Integrate the line length and busy tellers up to now, before either changes.
        elapsed = env.now - level["since"]
        stats["line_area"] += level["line"] * elapsed
        stats["busy_area"] += level["busy"] * elapsed
        level["since"] = env.now

    def customer():
        arrived = env.now
        with tellers.request() as request:
            account()
            level["line"] += 1
            patience = env.timeout(rng.expovariate(1.0 / MEAN_PATIENCE))
            outcome = yield request | patience
            account()
            level["line"] -= 1
            if request not in outcome:
                stats["reneged"] += 1
                return
            stats["waits"].append(env.now - arrived)
            level["busy"] += 1
            yield env.timeout(rng.expovariate(1.0 / MEAN_SERVICE))
            account()
            level["busy"] -= 1

    def arrivals():
        while True:
            yield env.timeout(rng.expovariate(ARRIVAL_RATE))
            stats["arrived"] += 1
            env.process(customer())

    env.process(arrivals())
    env.run(until=horizon)
    account()
    return (
        statistics.fmean(stats["waits"]),
        stats["reneged"] / stats["arrived"],
        stats["line_area"] / horizon,
        stats["busy_area"] / horizon / TELLERS,
    )


def t975(df):
    # Two-sided 95 % Student-t critical values; the normal value beyond the table.
    table = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 9: 2.262, 10: 2.228,
             19: 2.093, 20: 2.086, 29: 2.045, 30: 2.042, 49: 2.010, 99: 1.984}
    return table.get(df, 1.96 if df > 99 else 2.0)


def main():
    replications = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    horizon = float(sys.argv[2]) if len(sys.argv) > 2 else 10_000.0
    results = [replication(seed, horizon) for seed in range(replications)]
    print(f"SimPy reneging bank: {replications} replications of {horizon:g} minutes")
    names = ["mean wait (min)", "fraction reneged", "mean line length", "utilisation"]
    for index, name in enumerate(names):
        values = [result[index] for result in results]
        mean = statistics.fmean(values)
        half = t975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
        print(f"{name:<18} {mean:.4f} ± {half:.4f}")


if __name__ == "__main__":
    main()
