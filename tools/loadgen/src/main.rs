//! `loadgen [options]`: see `loadgen --help` and README.md.
use std::io::Write;

fn main() {
    let cfg = match loadgen::parse(std::env::args().skip(1)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let (json, csv, hgrm) = (cfg.json.clone(), cfg.csv.clone(), cfg.hgrm.clone());
    eprintln!(
        "loadgen: {} connections to {}, {} B requests, {}, {}",
        cfg.connections,
        cfg.addr,
        cfg.request_bytes,
        loadgen::Report::new(&cfg).mode(),
        match cfg.stop {
            loadgen::Stop::Duration(d) =>
                format!("{:.1} s after a {:.1} s warm-up", d.as_secs_f64(), cfg.warmup.as_secs_f64()),
            loadgen::Stop::Requests(n) => format!("{n} requests after a {:.1} s warm-up", cfg.warmup.as_secs_f64()),
        }
    );
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    let report = rt.block_on(loadgen::run(cfg));
    println!("{}", report.summary());
    if let Some(p) = json {
        let text = report.json();
        let r =
            if p.as_os_str() == "-" { writeln!(std::io::stdout(), "{text}") } else { std::fs::write(&p, text + "\n") };
        if let Err(e) = r {
            eprintln!("loadgen: writing {}: {e}", p.display());
            std::process::exit(2);
        }
    }
    if let Some(p) = hgrm {
        let mut text = Vec::new();
        if let Err(e) = report.histogram.write_hgrm(&mut text).and_then(|()| std::fs::write(&p, text)) {
            eprintln!("loadgen: writing {}: {e}", p.display());
            std::process::exit(2);
        }
    }
    if let Some(p) = csv {
        if let Err(e) = report.append_csv(&p) {
            eprintln!("loadgen: writing {}: {e}", p.display());
            std::process::exit(2);
        }
    }
    // Nothing measured at all is a failure; dead connections are reported in the result.
    std::process::exit(if report.requests == 0 { 1 } else { 0 });
}
