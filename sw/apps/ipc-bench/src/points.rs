//! Which points of the sweep a client build runs: all of them, or those a build-time filter
//! (`IPC_BENCH_ONLY`, see README.md) names, so that one point can be simulated (and profiled)
//! on the RTL without the minutes of simulation the rest of the sweep costs.

/// The filter compiled into this build, if any.
pub const ONLY: Option<&str> = option_env!("IPC_BENCH_ONLY");
/// The points whose measured window the client marks as a region (proto::WINDOW), in the same
/// syntax: the RTL profiler follows one region, so a run profiles the points named here.
pub const PROFILED: Option<&str> = option_env!("IPC_BENCH_PROFILE");

/// Whether the point (`variant`, `work`, `conc`) is selected by `only`: a comma-separated list
/// of `variant:work:concurrency` patterns, any field `*`; `None` or an empty list selects all.
pub fn selected(only: Option<&str>, variant: &str, work: &str, conc: usize) -> bool {
    let Some(only) = only.filter(|s| !s.trim().is_empty()) else { return true };
    only.split(',').any(|pat| {
        let mut f = pat.trim().split(':');
        let field = |f: Option<&str>, v: &str| f.is_none_or(|p| p == "*" || p == v);
        let conc_ok = |f: Option<&str>| f.is_none_or(|p| p == "*" || p.parse() == Ok(conc));
        field(f.next(), variant) && field(f.next(), work) && conc_ok(f.next())
    })
}

/// Whether any point of `variant` with `work` is selected (skips a variant's set-up).
pub fn any_of(only: Option<&str>, variant: &str, work: &str) -> bool {
    (1..=64).any(|c| selected(only, variant, work, c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_filter_selects_everything() {
        assert!(selected(None, "sync-fast", "none", 1));
        assert!(selected(Some(""), "async-cross", "heavy", 64));
    }

    #[test]
    fn patterns_select_only_their_points() {
        let only = Some("async-cross:matmul4:8, async-same:*:1");
        assert!(selected(only, "async-cross", "matmul4", 8));
        assert!(!selected(only, "async-cross", "matmul4", 64));
        assert!(!selected(only, "async-cross", "none", 8));
        assert!(selected(only, "async-same", "heavy", 1));
        assert!(!selected(only, "async-same", "heavy", 8));
        assert!(!selected(only, "sync-fast", "matmul4", 1));
        assert!(any_of(only, "async-same", "none"));
        assert!(!any_of(only, "sync-cross", "matmul4"));
    }

    #[test]
    fn short_patterns_match_every_value_of_the_missing_fields() {
        assert!(selected(Some("async-same"), "async-same", "none", 16));
        assert!(selected(Some("async-same:none"), "async-same", "none", 16));
        assert!(!selected(Some("async-same:none"), "async-same", "matmul4", 16));
    }
}
