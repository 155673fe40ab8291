//! Example: the timers bench's 60 fps torch frame, for instruction counts and profiles.
//!
//! `cargo run --release -p warpsim-benches --example torch_probe -- QUEUE FRAMES` adds 10⁶
//! torches burning out uniformly over 10 s (the same burn times as `benches/timers.rs`), then
//! runs `FRAMES` frames of 1/60 s (at most 600: the whole cycle) and prints how many torches
//! went out and the mean wall time of a frame. `QUEUE` is `wheel`, `ladder` or `heap`. Under `valgrind --tool=cachegrind
//! --cache-sim=no`, the difference between `FRAMES` = 600 and 0 divided by 10⁶ is the
//! instructions per callback of a frame without the set-up.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use warpsim_timers::{TimerCtx, TimerQueue, Timers};

struct World {
    lit: Vec<bool>,
    n_out: u64,
}

fn torch_out(world: &mut World, ctx: &mut TimerCtx<'_, World>) {
    world.lit[ctx.payload() as usize] = false;
    world.n_out += 1;
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let parsed = match &args[..] {
        [_, q, f] => {
            let queue = match q.as_str() {
                "wheel" => Some(TimerQueue::Wheel),
                "ladder" => Some(TimerQueue::Ladder),
                "heap" => Some(TimerQueue::Heap),
                _ => None,
            };
            queue.zip(f.parse::<u64>().ok().filter(|&f| f <= 600))
        }
        _ => None,
    };
    let Some((queue, frames)) = parsed else {
        eprintln!("usage: torch_probe wheel|ladder|heap FRAMES (0..=600)");
        std::process::exit(2);
    };
    let n = 1_000_000;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
    let burn: Vec<f64> = (0..n).map(|_| rng.random_range(1e-9..10.0)).collect();
    let mut timers = Timers::builder().capacity(n).queue(queue).build();
    // `SORTED=1`: add the torches in the order they burn out, so that timer slots are in
    // expiry order (the torch each one puts out stays the same).
    let mut order: Vec<usize> = (0..n).collect();
    if std::env::var_os("SORTED").is_some() {
        order.sort_by(|&a, &b| burn[a].total_cmp(&burn[b]));
    }
    if let Some(w) = std::env::var_os("WINDOW") {
        let w: f64 = w.to_str().unwrap().parse().unwrap();
        order.sort_by_key(|&a| (burn[a] / w) as u64);
    }
    for &i in &order {
        let burn_time = burn[i];
        timers
            .timer(burn_time)
            .payload(i as u64)
            .build(torch_out)
            .expect("room for 10^6 timers");
    }
    timers.next_due();
    let mut world = World {
        lit: vec![true; n],
        n_out: 0,
    };
    if std::env::var_os("ADDS").is_some() {
        // The timers bench's add: chunks of 256 adds at random delays in [1, 101) s, each
        // chunk cancelled again (untimed), the manager staying at 10^6 timers.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let mut timed = std::time::Duration::ZERO;
        let n_chunks = 2_000;
        for _ in 0..n_chunks {
            let delays: Vec<f64> = (0..256).map(|_| rng.random_range(1.0..101.0)).collect();
            let started = std::time::Instant::now();
            let ids: Vec<_> = delays
                .iter()
                .map(|&d| timers.timer(d).payload(0).build(torch_out).expect("room"))
                .collect();
            timed += started.elapsed();
            for id in ids {
                timers.cancel(id);
            }
        }
        println!(
            "add {:.1} ns",
            timed.as_secs_f64() * 1e9 / (n_chunks * 256) as f64
        );
    }
    // `POLL=1`: between frames (untimed), stream through 16 MB as the chapter's polling loop
    // does in `warpsim run torches`, so that each timer frame starts with cold caches.
    let mut polled: Vec<(f64, bool)> = if std::env::var_os("POLL").is_some() {
        burn.iter().map(|&b| (b, true)).collect()
    } else {
        Vec::new()
    };
    let mut elapsed = std::time::Duration::ZERO;
    for _ in 0..frames {
        for torch in &mut polled {
            torch.0 -= 1.0 / 60.0;
            torch.1 &= torch.0 > 0.0;
        }
        std::hint::black_box(&polled);
        let started = std::time::Instant::now();
        timers
            .advance(1.0 / 60.0, &mut world)
            .expect("a positive step");
        elapsed += started.elapsed();
    }
    println!(
        "{} torches out, {:.4} ms per frame",
        world.n_out,
        elapsed.as_secs_f64() * 1e3 / frames.max(1) as f64
    );
}
