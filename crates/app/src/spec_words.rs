//! The spec crate's validation errors in the command line's words: each field named by the flag
//! that sets it (`--qd`), and set as `--qd 32`. The spec crate reports which field is wrong and
//! why, as data ([`spec::validate::FieldError`]); the sentences are made here (and, for a job
//! file, in `spec::fiojob` with the job file's options).

use spec::validate::{Field, FieldError, ValidationError, Words};

/// The command line's words for the job's fields.
pub(crate) struct Flags;

impl Words for Flags {
    fn name(&self, field: Field) -> &str {
        match field {
            Field::Bs | Field::BsSplit | Field::BsRange | Field::BlockAlign => "--bs",
            Field::Qd => "--qd",
            Field::Threads => "--threads",
            Field::Mix => "--mix",
            Field::Size | Field::Zones => "--size",
            Field::Offset => "--offset",
            Field::Runtime => "--runtime",
            Field::RateIops => "--rate-iops",
            Field::Dist => "--dist",
            Field::Data => "--data",
            Field::Verify => "--verify",
            Field::VerifyInterval => "--verify-interval",
            Field::VerifyPattern => "--verify-pattern",
            Field::RwModifier | Field::Fill => "--rw",
        }
    }
    fn example(&self, field: Field, value: &str) -> String {
        format!("{} {value}", self.name(field))
    }
    fn buffered(&self) -> &str {
        "--buffered"
    }
    fn runtime_advice(&self) -> String {
        format!("use e.g. {}", self.example(Field::Runtime, "5s"))
    }
}

/// `invalid value for --qd: the queue depth 0 is out of range; use 1 to 32768, e.g. --qd 32`.
pub(crate) fn field_error(e: &FieldError) -> String {
    format!("invalid value for {}: {}", Flags.name(e.field), e.message(&Flags))
}

/// As [`field_error`], with the job's name after the flag when the plan has several jobs:
/// `invalid value for --bs (job "seqread"): ...`.
pub(crate) fn validation_error(e: &ValidationError) -> String {
    match e {
        ValidationError::NoJobs => "invalid value for job list: there are no jobs to run; give a job file with at \
                                    least one job section, or workload options"
            .to_string(),
        ValidationError::Job { job: None, error } => field_error(error),
        ValidationError::Job { job: Some(name), error } => {
            format!("invalid value for {} (job \"{name}\"): {}", Flags.name(error.field), error.message(&Flags))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use spec::validate::{depth_problem, validate_job, validate_plan, MAX_BS, MAX_QD, MAX_THREADS};
    use spec::{DataPattern, Distribution, EngineKind, JobGroup, JobSpec, RunPlan, SpecError, Zone};
    use std::time::Duration;

    /// The message a command shows for `job`'s first problem.
    fn err(f: impl FnOnce(&mut JobSpec)) -> String {
        let mut j = JobSpec::default();
        f(&mut j);
        match validate_job(&j) {
            Ok(()) => panic!("{j:?} is valid"),
            Err(e) => Error::from(e).to_string(),
        }
    }

    #[test]
    fn every_field_has_a_flag() {
        for f in Field::ALL {
            assert!(Flags.name(f).starts_with("--"), "{f:?}");
            assert_eq!(Flags.example(f, "1"), format!("{} 1", Flags.name(f)));
        }
    }

    #[test]
    fn runtime_zero_needs_time_based() {
        let j = JobSpec { runtime: Duration::ZERO, time_based: false, ..JobSpec::default() };
        assert!(validate_job(&j).is_ok());
        assert_eq!(
            err(|j| j.runtime = Duration::ZERO),
            "invalid value for --runtime: a time-based run needs a runtime above 0; use e.g. --runtime 5s"
        );
    }

    #[test]
    fn each_check_names_its_flag() {
        assert!(err(|j| j.bs = 0).starts_with("invalid value for --bs: the block size must not be 0"));
        assert!(err(|j| j.bs = MAX_BS + 1).contains("256 MiB maximum"));
        assert!(err(|j| j.bs = MAX_BS + 1).starts_with("invalid value for --bs:"));
        assert_eq!(
            err(|j| j.qd = 0),
            "invalid value for --qd: the queue depth 0 is out of range; use 1 to 32768, e.g. --qd 32"
        );
        assert!(err(|j| j.qd = MAX_QD + 1).starts_with("invalid value for --qd:"));
        assert!(err(|j| j.threads = 0).starts_with("invalid value for --threads:"));
        assert!(err(|j| j.threads = MAX_THREADS + 1).starts_with("invalid value for --threads:"));
        assert!(err(|j| j.mix = 101).starts_with("invalid value for --mix:"));
        assert!(err(|j| j.size = Some(0)).starts_with("invalid value for --size: the region size must not be 0"));
        assert!(err(|j| j.rate_iops = Some(0)).starts_with("invalid value for --rate-iops:"));
        assert!(err(|j| j.dist = Distribution::Zipf { theta: 0.0 }).starts_with("invalid value for --dist:"));
        assert!(err(|j| j.dist = Distribution::Zipf { theta: f64::NAN }).contains("greater than 0"));
        assert!(err(|j| j.dist = Distribution::Pareto { h: 1.0 }).contains("between 0 and 1"));
        assert!(err(|j| j.dist = Distribution::Zoned { zones: vec![] }).contains("at least one zone"));
        assert!(err(|j| j.dist = Distribution::Zoned { zones: vec![Zone { ops_pct: 50.0, area_pct: 50.0 }] })
            .contains("add up to 100"));
        assert!(err(|j| j.dist = Distribution::Zoned { zones: vec![Zone { ops_pct: 100.0, area_pct: 0.0 }] })
            .contains("is invalid"));
        assert!(err(|j| j.data = DataPattern::Compress { pct: 101 }).starts_with("invalid value for --data:"));
        assert_eq!(
            err(|j| j.offset = 100),
            "invalid value for --offset: the offset 100 is not a multiple of 512 bytes, which direct I/O \
             requires; use e.g. --offset 1M, or --buffered for buffered I/O"
        );
        let e = err(|j| {
            j.size = Some(1024);
            j.bs = 4096;
        });
        assert_eq!(
            e,
            "invalid value for --size: the region size 1 KiB is smaller than the block size 4 KiB (--bs); use a \
             larger --size or a smaller --bs"
        );
        let e = err(|j| j.verify = Some(spec::VerifySpec { kind: spec::VerifyKind::Pattern, ..Default::default() }));
        assert_eq!(
            e,
            "invalid value for --verify: pattern verification needs the pattern; add --verify-pattern 0xdeadbeef"
        );
    }

    #[test]
    fn depth_limits_follow_the_engine() {
        assert_eq!(
            err(|j| j.qd = 65_536),
            "invalid value for --qd: 65536 is above io_uring's limit of 32768 per worker; use --threads to add \
             workers (each with its own queue) and at most 32768 for --qd"
        );
        let e = err(|j| {
            j.engine = EngineKind::Null;
            j.qd = MAX_QD + 1;
        });
        assert!(e.starts_with("invalid value for --qd: 32769 is above the limit (io_uring's"), "{e}");
        let e = err(|j| {
            j.engine = EngineKind::Psync;
            j.qd = 128;
            j.threads = 64;
        });
        assert_eq!(
            e,
            "invalid value for --qd: psync runs one thread per I/O in flight, and 128 x 64 workers is 8192 \
             threads, above the limit of 4096; lower --qd or --threads, or use the io_uring engine"
        );
        assert!(depth_problem(EngineKind::Psync, 4097, 1, "--max-qd", "--max-threads")
            .is_some_and(|m| m.contains("lower --max-qd or --max-threads")));
    }

    #[test]
    fn a_plan_names_the_job_when_several() {
        let good = JobSpec::default();
        let bad = JobSpec { name: "seqread".into(), qd: 0, ..JobSpec::default() };
        let plan = |groups: Vec<Vec<JobSpec>>| RunPlan {
            groups: groups.into_iter().map(|jobs| JobGroup { jobs, group_reporting: false }).collect(),
            ..RunPlan::default()
        };
        let message = |p: &RunPlan| Error::from(validate_plan(p).expect_err("invalid")).to_string();
        assert!(message(&plan(vec![vec![bad.clone()]])).starts_with("invalid value for --qd: the queue depth 0"));
        assert!(message(&plan(vec![vec![good.clone()], vec![bad]]))
            .starts_with("invalid value for --qd (job \"seqread\"): the queue depth 0"));
        assert!(validate_plan(&plan(vec![vec![good.clone(), good]])).is_ok());
        assert_eq!(
            message(&RunPlan::default()),
            "invalid value for job list: there are no jobs to run; give a job file with at least one job \
             section, or workload options"
        );
    }

    #[test]
    fn through_spec_error_the_words_are_the_same() {
        // A command that checks its options into a SpecError (compare, sla) says the same.
        let j = JobSpec { qd: 0, ..JobSpec::default() };
        let direct = validate_job(&j).map_err(Error::from).expect_err("qd 0");
        let via = validate_job(&j).map_err(SpecError::from).map_err(Error::from).expect_err("qd 0");
        assert_eq!(direct, via);
        assert!(via.is_usage());
        assert!(via.message().starts_with("invalid value for --qd: "));
    }
}
