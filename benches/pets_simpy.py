"""The seed article's third feeding-pets simulation (the event priority queue), in SimPy.

Used by BENCHMARKS.md ("Feeding pets") side by side with `warpsim run pets` and the
article's Go program (benches/pets-go). Same model as warpsim's events style and the
article: at the start and after every event, each of the K feeders rolls for breakage
(until all are broken), broken feeders are repaired after max(0, R + N(0,1)·R/4), and free
healthy feeders take hungry pets, each eating max(0, T + N(0,1)·T/4). Meals and repairs are
SimPy processes; the article's loop body runs after each one ends.

    python3 benches/pets_simpy.py [TASKS]     # default 1,000,000 pets, 10 feeders
"""

import random
import sys

import simpy


def main():
    tasks = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    gates, break_chance, repair_time, processing_time = 10, 0.05, 120.0, 15.0
    rng = random.Random(100)
    env = simpy.Environment()
    state = {"done": 0, "started": 0, "inflight": 0, "broken": 0, "breakdowns": 0}
    marks = {50: None, 95: None, 99: None, 100: None}

    def meal(duration):
        yield env.timeout(duration)
        state["done"] += 1
        state["inflight"] -= 1
        after_event()

    def repair(duration):
        yield env.timeout(duration)
        state["broken"] -= 1
        after_event()

    def roll_and_fill():
        for _ in range(gates):
            if state["broken"] >= gates:
                break
            if rng.random() < break_chance:
                state["broken"] += 1
                state["breakdowns"] += 1
                env.process(repair(max(0.0, rng.gauss(repair_time, repair_time / 4))))
        while state["inflight"] < gates - state["broken"] and state["started"] < tasks:
            state["inflight"] += 1
            state["started"] += 1
            env.process(meal(max(0.0, rng.gauss(processing_time, processing_time / 4))))

    def after_event():
        percent = 100 * state["done"] // tasks
        for p in marks:
            if percent >= p and marks[p] is None:
                marks[p] = env.now
        if state["done"] < tasks:
            roll_and_fill()

    roll_and_fill()
    env.run()
    print(
        f"Time to X%: 50% = {marks[50]:.0f}, 95% = {marks[95]:.0f}, 99% = {marks[99]:.0f}, "
        f"100% = {marks[100]:.0f} ({state['done']} fed, {state['breakdowns']} breakdowns)"
    )


if __name__ == "__main__":
    main()
