//! Serve the pages over the in-memory FakeService, to look at them in a browser:
//! `cargo run -p diskmeter-web --example fake_serve -- [SECONDS]` (default 60), then open the
//! printed URL. The fake mark fills its card in about two seconds.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn main() -> Result<(), web::WebError> {
    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(60);
    let bound = web::bind(&web::Config::default())?;
    println!("{}", bound.url());
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(secs));
        flag.store(true, Ordering::Relaxed);
    });
    let svc = Arc::new(web::fake::FakeService::new(Duration::from_millis(250)).with_many(20));
    web::serve_blocking(bound, svc, stop)
}
