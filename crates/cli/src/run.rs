//! `warpsim run <model>`: build the model, run it on the chosen kernel, print the report.

use anyhow::{Result, anyhow};
use serde::Serialize;
use serde_json::{Map, Value};
use warpsim_core::{
    Kernel, LogicalProcess, OutputSink, Report, RunConfig, RunError, Sequential,
};
use warpsim_models::phold::PholdParams;

use crate::cli::{CommonArgs, DEFAULT_SEED, KernelKind, ModelCmd, PholdArgs, RunCmd};
use crate::progress::Progress;

pub(crate) fn run(command: RunCmd) -> Result<()> {
    match command.model {
        ModelCmd::Phold(args) => run_phold(args),
    }
}

/// The run settings every model shares.
fn run_config(common: &CommonArgs, seed: u64, end: f64) -> RunConfig {
    let mut config = RunConfig::new(seed).end_time(end);
    if let Some(max_events) = common.max_events {
        config = config.max_events(max_events);
    }
    if let Some(cost) = common.critical_path {
        config = config.critical_path(cost.into());
    }
    config
}

/// Runs `lps` on the kernel the user chose. A failed run still prints what it did.
fn run_on_kernel<M, S>(
    common: &CommonArgs,
    config: RunConfig,
    lps: Vec<M>,
    sink: &mut S,
) -> std::result::Result<Report, RunError>
where
    M: LogicalProcess,
    S: OutputSink<M::Output>,
{
    let progress = Progress::new(config.end_time);
    let hook = progress.hook(config.end_time);
    let result = match common.kernel {
        KernelKind::Sequential => Sequential::new(config)
            .queue(common.queue.into())
            .on_progress(hook)
            .run(lps, sink),
    };
    progress.finish();
    result
}

/// Prints the report (readable, or one JSON object) with the model's own figures.
fn print_report<P: Serialize>(
    common: &CommonArgs,
    model: &str,
    title: &str,
    params: &P,
    report: &Report,
    extra: Map<String, Value>,
    error: Option<&RunError>,
) -> Result<()> {
    if common.json {
        let mut object = Map::new();
        object.insert("model".into(), Value::from(model));
        if let Value::Object(fields) = serde_json::to_value(report)? {
            object.extend(fields);
        }
        object.extend(extra);
        object.insert("params".into(), serde_json::to_value(params)?);
        if let Some(error) = error {
            object.insert("error".into(), Value::from(error.to_string()));
        }
        println!("{}", Value::Object(object));
    } else {
        println!("{title}");
        println!("{report}");
        for (key, value) in &extra {
            println!("{key:<17} {value}");
        }
    }
    Ok(())
}

fn run_phold(args: PholdArgs) -> Result<()> {
    let params = PholdParams {
        lps: args.lps,
        population: args.population,
        remote: args.remote,
        lookahead: args.lookahead,
        mean: args.mean,
        end: args.end,
        work: args.work,
    };
    let lps = params.build().map_err(|error| anyhow!("phold: {error}"))?;
    let common = &args.common;
    let seed = common.seed.unwrap_or(DEFAULT_SEED);
    let config = run_config(common, seed, params.end);
    let title = format!(
        "PHOLD: {} LPs, population {}, remote {}, lookahead {}, mean {}, end {}, work {}",
        params.lps,
        params.population,
        params.remote,
        params.lookahead,
        params.mean,
        params.end,
        params.work
    );
    let result = run_on_kernel(common, config, lps, &mut warpsim_core::Discard);
    finish(common, "phold", &title, &params, result, Map::new())
}

/// Prints a finished run; a failed one prints its partial report, then fails.
fn finish<P: Serialize>(
    common: &CommonArgs,
    model: &str,
    title: &str,
    params: &P,
    result: std::result::Result<Report, RunError>,
    extra: Map<String, Value>,
) -> Result<()> {
    match result {
        Ok(report) => print_report(common, model, title, params, &report, extra, None),
        Err(error) => {
            print_report(
                common,
                model,
                title,
                params,
                &error.partial,
                extra,
                Some(&error),
            )?;
            Err(anyhow!("{model}: run stopped: {}", error.error))
        }
    }
}
