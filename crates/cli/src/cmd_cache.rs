//! `diskmeter cache`: options → app::cache, then the results (simulate, mrc, warmup) or a
//! one-line summary of the trace written (synth, convert).

use crate::args::{CacheAction, CacheArgs, TraceArgs};
use crate::{finished, measure, signals, Outcome};
use app::cache;
use app::output::{print_stdout, rendered, sanitize};

impl TraceArgs {
    fn options(&self) -> cache::TraceOptions {
        self.read.options(&self.trace)
    }
}

impl CacheAction {
    fn options(&self) -> cache::Options {
        match self {
            CacheAction::Simulate(s) => cache::Options::Simulate(Box::new(cache::SimulateOptions {
                input: s.input.options(),
                preset: s.preset.clone(),
                cache_size: s.cache_size.clone(),
                block: s.block.clone(),
                sub_block: s.sub_block.clone(),
                por: s.por,
                pow: s.pow,
                mode: s.mode.clone(),
                seq_cutoff: s.seq_cutoff.clone(),
                policy: s.policy.clone(),
                unit: s.unit.clone(),
                counter_limit: s.counter_limit.clone(),
                interval: s.interval.clone(),
                ssd_size: s.ssd_size.clone(),
                hdd_iops: s.hdd_iops.clone(),
                hdd_latency: s.hdd_latency.clone(),
                hdds: s.hdds,
                raid_penalty: s.raid_penalty,
                ssd_iops: s.ssd_iops.clone(),
                ssd_latency: s.ssd_latency.clone(),
                ssds: s.ssds,
            })),
            CacheAction::Mrc(m) => cache::Options::Mrc(cache::MrcOptions {
                input: m.input.options(),
                unit: m.unit.clone(),
                sizes: m.sizes.clone(),
                shards: m.shards.clone(),
                reads_only: m.reads_only,
                policy: m.policy.clone(),
                preset: m.preset.clone(),
            }),
            CacheAction::Warmup(w) => cache::Options::Warmup(cache::WarmupOptions {
                capacity: w.capacity.clone(),
                threshold: w.threshold,
                hdd_iops: w.hdd_iops.clone(),
                io_size: w.io_size.clone(),
                hdds: w.hdds,
            }),
            CacheAction::Synth(y) => cache::Options::Synth(cache::SynthOptions {
                dist: y.dist.clone(),
                blocks: y.blocks.clone(),
                requests: y.requests.clone(),
                block_size: y.block_size.clone(),
                read_pct: y.read_pct.clone(),
                iops: y.iops.clone(),
                contiguous: y.contiguous,
                seed: y.seed,
                output: y.output.clone(),
                force: y.force,
            }),
            CacheAction::Convert(c) => cache::Options::Convert(cache::ConvertOptions {
                input: c.input.options(),
                output: c.output.clone(),
                force: c.force,
            }),
        }
    }
}

pub fn run(a: &CacheArgs) -> Outcome {
    let opts = a.action.options();
    // simulate, mrc and warmup give a result document (output files checked first); synth and
    // convert write a trace and print a summary of it.
    let (out, json) = match &a.action {
        CacheAction::Simulate(s) => (Some(&s.out), false),
        CacheAction::Mrc(m) => (Some(&m.out), false),
        CacheAction::Warmup(w) => (Some(&w.out), false),
        CacheAction::Synth(y) => (None, y.json),
        CacheAction::Convert(c) => (None, c.json),
    };
    if let Some(out) = out {
        return measure("cache", out, |stop, _| cache::run(&cache::Config::new(&opts)?, &stop));
    }
    let cfg = cache::Config::new(&opts)?;
    let stop = signals::install();
    let mut doc = cache::run(&cfg, &stop)?;
    signals::name_in(&mut doc);
    if json {
        print_stdout(&rendered(&doc, report::Format::Json)?)?;
    } else if let Some(line) = report::trace_summary(&doc) {
        // The trace is written; a closed stdout does not undo that.
        let _ = print_stdout(&format!("{}\n", sanitize(&line)));
    }
    finished(&doc)
}
