//! Terminal UI (ratatui): device table, per-device sparklines of IOPS and await, process list.
//!
//! As in bottom, collection runs on its own thread and input on another; both feed one
//! channel that the drawing loop reads. The terminal is restored by ratatui's panic hook
//! and by a drop guard on every other way out.

use crate::devices::Filter;
use crate::monitor::{DeviceReport, Monitor, Report, SortKey};
use crate::render::{delay_pct, human_rate, perfmon_secs, sanitize, Columns};
use crate::run::{sleep_until, Recorder};
use crate::sample::SampleSource;
use crate::verdict::State;
use crate::MonitorError;
use ratatui::crossterm::event::{self, Event as CtEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Sparkline, Table};
use ratatui::Frame;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Points kept per sparkline.
const HISTORY: usize = 120;

/// What the drawing loop reacts to.
pub enum Event {
    Report(Box<Report>),
    Key(KeyEvent),
    /// The source ended (end of a replay) or failed.
    SourceEnded(Option<String>),
}

/// The UI state; drawing is a pure function of it (testable with a `TestBackend`).
pub struct App {
    pub last: Option<Report>,
    history: HashMap<String, VecDeque<(f64, f64)>>,
    /// The user's device filter (command line), plus the typed prefix.
    pub filter: Filter,
    pub sort: SortKey,
    pub show_procs: bool,
    pub paused: bool,
    /// `Some` while a filter prefix is being typed.
    pub typing: Option<String>,
    pub status: Option<String>,
    /// The names the device table shows its figures under (iostat's unless set).
    pub columns: Columns,
}

impl App {
    pub fn new(filter: Filter, sort: SortKey, show_procs: bool) -> App {
        App {
            last: None,
            history: HashMap::new(),
            filter,
            sort,
            show_procs,
            paused: false,
            typing: None,
            status: None,
            columns: Columns::Iostat,
        }
    }

    pub fn on_report(&mut self, r: Report) {
        if self.paused {
            return;
        }
        for d in &r.devices {
            let h = self.history.entry(d.name.clone()).or_default();
            h.push_back((d.iostat.iops(), d.iostat.await_ms));
            while h.len() > HISTORY {
                h.pop_front();
            }
        }
        self.last = Some(r);
    }

    /// Handle a key; true means quit.
    pub fn on_key(&mut self, k: KeyEvent) -> bool {
        if k.kind != KeyEventKind::Press {
            return false;
        }
        if k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL) {
            return true;
        }
        if let Some(buf) = &mut self.typing {
            match k.code {
                KeyCode::Enter => {
                    let p = std::mem::take(buf);
                    self.filter.prefix = if p.is_empty() { None } else { Some(p) };
                    self.typing = None;
                }
                KeyCode::Esc => self.typing = None,
                KeyCode::Backspace => {
                    buf.pop();
                }
                KeyCode::Char(c) if !c.is_control() => buf.push(c),
                _ => {}
            }
            return false;
        }
        match k.code {
            KeyCode::Char('q') | KeyCode::Esc => return true,
            KeyCode::Char('s') => self.sort = cycle(self.sort, 1),
            KeyCode::Char('S') => self.sort = cycle(self.sort, SortKey::ALL.len() - 1),
            KeyCode::Char('f') => self.typing = Some(self.filter.prefix.clone().unwrap_or_default()),
            KeyCode::Char('p') => self.show_procs = !self.show_procs,
            KeyCode::Char('a') => {
                let all = !self.filter.all_devices;
                self.filter.all_devices = all;
                self.filter.partitions = all;
            }
            KeyCode::Char(' ') => self.paused = !self.paused,
            _ => {}
        }
        false
    }

    /// Devices shown, filtered and sorted.
    pub fn visible(&self) -> Vec<&DeviceReport> {
        let Some(r) = &self.last else { return Vec::new() };
        let mut v: Vec<&DeviceReport> =
            r.devices.iter().filter(|d| self.filter.accepts_parts(&d.name, d.mapper.as_deref(), d.kind)).collect();
        let key = |d: &DeviceReport| self.sort.value(d);
        if self.sort != SortKey::Name {
            v.sort_by(|a, b| key(b).total_cmp(&key(a)).then_with(|| a.name.cmp(&b.name)));
        }
        v
    }
}

fn cycle(k: SortKey, step: usize) -> SortKey {
    let i = SortKey::ALL.iter().position(|x| *x == k).unwrap_or(0);
    SortKey::ALL[(i + step) % SortKey::ALL.len()]
}

fn state_style(s: State) -> Style {
    match s {
        State::Idle => Style::default().fg(Color::DarkGray),
        State::Ok => Style::default().fg(Color::Green),
        State::Busy => Style::default().fg(Color::Yellow),
        State::Saturated => Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        State::Reset => Style::default().fg(Color::Magenta),
    }
}

/// A figure column of the device table: its header (`short` where the full names do not fit),
/// its width, and its text for one device.
struct TuiColumn {
    full: &'static str,
    short: &'static str,
    width: u16,
    cell: fn(&DeviceReport) -> String,
}

impl TuiColumn {
    const fn same(head: &'static str, width: u16, cell: fn(&DeviceReport) -> String) -> TuiColumn {
        TuiColumn { full: head, short: head, width, cell }
    }
}

const IOSTAT_TABLE: [TuiColumn; 9] = [
    TuiColumn::same("r/s", 9, |d| format!("{:.1}", d.iostat.r_s)),
    TuiColumn::same("w/s", 9, |d| format!("{:.1}", d.iostat.w_s)),
    TuiColumn::same("rkB/s", 10, |d| format!("{:.1}", d.iostat.rkb_s)),
    TuiColumn::same("wkB/s", 10, |d| format!("{:.1}", d.iostat.wkb_s)),
    TuiColumn::same("r_await", 8, |d| format!("{:.2}", d.iostat.r_await)),
    TuiColumn::same("w_await", 8, |d| format!("{:.2}", d.iostat.w_await)),
    TuiColumn::same("aqu-sz", 7, |d| format!("{:.2}", d.iostat.aqu_sz)),
    TuiColumn::same("%util", 6, |d| format!("{:.1}", d.iostat.util)),
    TuiColumn::same("inflight", 8, |d| d.inflight.to_string()),
];

/// perfmon's PhysicalDisk counters as Windows users read them; Current Disk Queue Length is the
/// requests in flight.
const PERFMON_TABLE: [TuiColumn; 8] = [
    TuiColumn {
        full: "Disk Reads/sec",
        short: "Reads/sec",
        width: 10,
        cell: |d| format!("{:.1}", d.perfmon.reads_sec),
    },
    TuiColumn {
        full: "Disk Writes/sec",
        short: "Writes/sec",
        width: 10,
        cell: |d| format!("{:.1}", d.perfmon.writes_sec),
    },
    TuiColumn {
        full: "Disk Bytes/sec",
        short: "Bytes/sec",
        width: 12,
        cell: |d| format!("{:.0}", d.perfmon.bytes_sec),
    },
    TuiColumn {
        full: "Avg. Disk sec/Read",
        short: "sec/Read",
        width: 9,
        cell: |d| perfmon_secs(d.perfmon.sec_per_read),
    },
    TuiColumn {
        full: "Avg. Disk sec/Write",
        short: "sec/Write",
        width: 9,
        cell: |d| perfmon_secs(d.perfmon.sec_per_write),
    },
    TuiColumn {
        full: "Avg. Disk Queue Length",
        short: "Avg. Queue",
        width: 10,
        cell: |d| format!("{:.2}", d.perfmon.avg_queue),
    },
    TuiColumn {
        full: "Current Disk Queue Length",
        short: "Cur. Queue",
        width: 10,
        cell: |d| d.perfmon.current_queue.to_string(),
    },
    TuiColumn { full: "% Idle Time", short: "% Idle", width: 6, cell: |d| format!("{:.1}", d.perfmon.idle_pct) },
];

/// The device table: Device, class, the figures of `columns`, verdict. Full names where the
/// table is wide enough for them, else the short ones.
fn device_table<'a>(columns: Columns, devices: &[&DeviceReport], area_width: u16) -> Table<'a> {
    let figures: &[TuiColumn] = match columns {
        Columns::Iostat => &IOSTAT_TABLE,
        Columns::Perfmon => &PERFMON_TABLE,
    };
    const DEVICE_W: u16 = 10;
    const CLASS_W: u16 = 7;
    const VERDICT_W: u16 = 9;
    let full_w = |c: &TuiColumn| c.width.max(c.full.len() as u16);
    let columns_n = figures.len() as u16 + 3;
    // Two borders, the columns, one space between two columns.
    let needed = 2 + DEVICE_W + CLASS_W + VERDICT_W + figures.iter().map(full_w).sum::<u16>() + (columns_n - 1);
    let full = area_width >= needed;
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut heads = vec![Cell::from("Device").style(bold), Cell::from("class").style(bold)];
    heads.extend(figures.iter().map(|c| Cell::from(if full { c.full } else { c.short }).style(bold)));
    heads.push(Cell::from("verdict").style(bold));
    let rows: Vec<Row> = devices
        .iter()
        .map(|d| {
            let mut cells = vec![Cell::from(sanitize(d.display_name())), Cell::from(d.class.as_str())];
            cells.extend(figures.iter().map(|c| Cell::from((c.cell)(d))));
            cells.push(Cell::from(d.verdict.state.as_str()).style(state_style(d.verdict.state)));
            Row::new(cells)
        })
        .collect();
    let mut widths = vec![Constraint::Min(DEVICE_W), Constraint::Length(CLASS_W)];
    widths.extend(figures.iter().map(|c| Constraint::Length(if full { full_w(c) } else { c.width })));
    widths.push(Constraint::Length(VERDICT_W));
    Table::new(rows, widths).header(Row::new(heads))
}

/// Draw the whole screen.
pub fn draw(f: &mut Frame, app: &App) {
    let devices = app.visible();
    let procs_h = if app.show_procs { 9 } else { 0 };
    let spark_rows = devices.len().min(4) as u16;
    let reasons: Vec<&DeviceReport> = devices
        .iter()
        .copied()
        .filter(|d| matches!(d.verdict.state, State::Busy | State::Saturated | State::Reset))
        .collect();
    let [title, table, reasons_a, sparks, procs, help] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(devices.len().max(1) as u16 + 3),
        Constraint::Length(reasons.len().min(4) as u16),
        Constraint::Length(if spark_rows > 0 { spark_rows * 3 + 1 } else { 0 }),
        Constraint::Min(procs_h),
        Constraint::Length(1),
    ])
    .areas(f.area());

    let mut head = vec![Span::styled("diskmeter top", Style::default().add_modifier(Modifier::BOLD))];
    if let Some(r) = &app.last {
        head.push(Span::raw(format!("  {}  interval {:.2} s", r.t, r.interval_s)));
        match &r.psi {
            Some(p) => head.push(Span::raw(format!(
                "  io pressure some {:.1}%{}",
                p.some_pct,
                p.full_pct.map(|x| format!(" full {x:.1}%")).unwrap_or_default()
            ))),
            None => head.push(Span::raw("  io pressure n/a")),
        }
    } else {
        head.push(Span::raw("  waiting for the first interval…"));
    }
    head.push(Span::raw(format!("  sort: {}", app.sort.as_str())));
    if let Some(p) = &app.filter.prefix {
        head.push(Span::raw(format!("  filter: {}*", sanitize(p))));
    }
    if app.paused {
        head.push(Span::styled("  [paused]", Style::default().fg(Color::Yellow)));
    }
    f.render_widget(Paragraph::new(Line::from(head)), title);

    let empty = devices.is_empty();
    let table_w = device_table(app.columns, &devices, table.width).block(Block::default().borders(Borders::ALL).title(
        if empty && app.last.is_some() { " devices (none match: a shows all, f filters) " } else { " devices " },
    ));
    f.render_widget(table_w, table);

    let lines: Vec<Line> = reasons
        .iter()
        .take(4)
        .map(|d| {
            Line::from(vec![
                Span::styled(format!(" {}: ", sanitize(d.display_name())), state_style(d.verdict.state)),
                Span::raw(d.verdict.reason.clone()),
            ])
        })
        .collect();
    f.render_widget(Paragraph::new(lines), reasons_a);

    if spark_rows > 0 {
        // Busy devices first: an idle disk's flat line tells nothing.
        let mut busy: Vec<&DeviceReport> = devices.clone();
        busy.sort_by_key(|d| d.verdict.state == State::Idle);
        draw_sparklines(f, app, &busy[..spark_rows as usize], sparks);
    }
    if app.show_procs {
        draw_procs(f, app, procs);
    }
    let help_text = match &app.typing {
        Some(buf) => format!(" filter by name prefix: {}_   (Enter apply, Esc cancel)", sanitize(buf)),
        None => " q quit  s/S sort  f filter  p processes  a all devices  space pause".to_string(),
    };
    let help_line = match &app.status {
        Some(s) => format!("{help_text}   {}", sanitize(s)),
        None => help_text,
    };
    f.render_widget(Paragraph::new(help_line).style(Style::default().fg(Color::DarkGray)), help);
}

fn draw_sparklines(f: &mut Frame, app: &App, devices: &[&DeviceReport], area: Rect) {
    let block = Block::default().borders(Borders::TOP).title(" IOPS | await (ms), last 2 minutes ");
    let inner = block.inner(area);
    f.render_widget(block, area);
    let rows = Layout::vertical(devices.iter().map(|_| Constraint::Length(3))).split(inner);
    for (d, row) in devices.iter().zip(rows.iter()) {
        let [label, iops_a, await_a] =
            Layout::horizontal([Constraint::Length(12), Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(*row);
        let h = app.history.get(&d.name);
        let iops: Vec<u64> = h.map(|h| h.iter().map(|p| p.0.round() as u64).collect()).unwrap_or_default();
        // Await in µs so sub-millisecond devices still draw a shape.
        let lat: Vec<u64> = h.map(|h| h.iter().map(|p| (p.1 * 1000.0).round() as u64).collect()).unwrap_or_default();
        let tail = |v: &[u64], w: u16| v[v.len().saturating_sub(w as usize)..].to_vec();
        f.render_widget(
            Paragraph::new(vec![
                Line::from(sanitize(d.display_name())),
                Line::from(format!("{:.0}/s", d.iostat.iops())),
                Line::from(format!("{:.2} ms", d.iostat.await_ms)),
            ]),
            label,
        );
        f.render_widget(
            Sparkline::default().data(tail(&iops, iops_a.width)).style(Style::default().fg(Color::Cyan)),
            iops_a,
        );
        f.render_widget(
            Sparkline::default().data(tail(&lat, await_a.width)).style(Style::default().fg(Color::Magenta)),
            await_a,
        );
    }
}

fn draw_procs(f: &mut Frame, app: &App, area: Rect) {
    let r = app.last.as_ref();
    let procs = r.and_then(|r| r.processes.as_deref()).unwrap_or(&[]);
    let note = r.and_then(|r| r.processes_note.clone()).unwrap_or_default();
    let header = Row::new(
        ["PID", "COMMAND", "READ", "WRITE", "RCHAR", "WCHAR", "IO%", "SWAPIN%"]
            .map(|h| Cell::from(h).style(Style::default().add_modifier(Modifier::BOLD))),
    );
    let rows: Vec<Row> = procs
        .iter()
        .map(|p| {
            Row::new(vec![
                Cell::from(p.pid.to_string()),
                Cell::from(sanitize(&p.comm)),
                Cell::from(human_rate(p.read_bytes_s)),
                Cell::from(human_rate(p.write_bytes_s)),
                Cell::from(human_rate(p.rchar_s)),
                Cell::from(human_rate(p.wchar_s)),
                Cell::from(delay_pct(p.io_delay_pct)),
                Cell::from(delay_pct(p.swapin_delay_pct)),
            ])
        })
        .collect();
    let widths = [
        Constraint::Length(8),
        Constraint::Min(16),
        Constraint::Length(12),
        Constraint::Length(12),
        Constraint::Length(12),
        Constraint::Length(12),
        Constraint::Length(7),
        Constraint::Length(8),
    ];
    let title = if procs.is_empty() { " processes (none did I/O) ".to_string() } else { " processes ".to_string() };
    let [t, n] = Layout::vertical([Constraint::Min(3), Constraint::Length(1)]).areas(area);
    f.render_widget(
        Table::new(rows, widths).header(header).block(Block::default().borders(Borders::ALL).title(title)),
        t,
    );
    f.render_widget(Paragraph::new(format!(" {note}")).style(Style::default().fg(Color::DarkGray)), n);
}

/// Restores the terminal however the TUI ends.
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// TUI options.
pub struct TuiConfig {
    pub interval: Duration,
    pub record: Option<files::output::OutputFile>,
    /// The user's device filter; the monitor itself collects every device so the keys can widen it.
    pub filter: Filter,
    pub show_procs: bool,
    /// The names the device table shows its figures under.
    pub columns: Columns,
}

/// Run the TUI until q/Esc/Ctrl-C (or the end of a replay, after a key).
pub fn run(
    mut monitor: Monitor,
    mut source: Box<dyn SampleSource + Send>,
    cfg: TuiConfig,
    stop: Arc<AtomicBool>,
) -> Result<(), MonitorError> {
    let mut recorder = match &cfg.record {
        Some(p) => Some(Recorder::create(p, cfg.interval.as_secs_f64(), true)?),
        None => None,
    };
    let sort = monitor.opts.sort;
    // The terminal first: its panic hook must be in place before any thread can panic.
    let mut terminal = match ratatui::try_init() {
        Ok(t) => t,
        Err(e) => {
            ratatui::restore();
            return Err(MonitorError::Runtime(format!("cannot start the terminal UI: {e}")));
        }
    };
    let guard = Restore;
    let (tx, rx) = mpsc::channel::<Event>();
    let interval = cfg.interval;
    let stop_c = stop.clone();
    let txc = tx.clone();
    let collector = std::thread::spawn(move || {
        let start = Instant::now();
        let mut tick = 0u32;
        loop {
            let sample = match source.next_sample() {
                Ok(Some(s)) => s,
                Ok(None) => {
                    let _ = txc.send(Event::SourceEnded(None));
                    return Ok(recorder);
                }
                Err(e) => {
                    let _ = txc.send(Event::SourceEnded(Some(e.to_string())));
                    return Ok(recorder);
                }
            };
            if let Some(r) = &mut recorder {
                if let Err(e) = r.sample(&sample) {
                    let _ = txc.send(Event::SourceEnded(Some(e.to_string())));
                    return Err(e);
                }
            }
            if let Some(rep) = monitor.push(&sample) {
                if txc.send(Event::Report(Box::new(rep))).is_err() {
                    return Ok(recorder);
                }
            }
            // A replay is paced at the recorded interval so it looks like the live run.
            tick += 1;
            if !sleep_until(start + interval * tick, &stop_c) {
                return Ok(recorder);
            }
        }
    });
    let stop_i = stop.clone();
    let txi = tx;
    let input = std::thread::spawn(move || {
        while !stop_i.load(Ordering::SeqCst) {
            match event::poll(Duration::from_millis(100)) {
                Ok(true) => {
                    if let Ok(CtEvent::Key(k)) = event::read() {
                        if txi.send(Event::Key(k)).is_err() {
                            return;
                        }
                    }
                }
                Ok(false) => {}
                Err(_) => return,
            }
        }
    });

    let mut app = App::new(cfg.filter, sort, cfg.show_procs);
    app.columns = cfg.columns;
    let mut result = Ok(());
    loop {
        if let Err(e) = terminal.draw(|f| draw(f, &app)) {
            result = Err(MonitorError::Runtime(format!("cannot draw: {e}")));
            break;
        }
        let ev = match rx.recv_timeout(Duration::from_millis(250)) {
            Ok(ev) => ev,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        match ev {
            Event::Report(r) => app.on_report(*r),
            Event::Key(k) => {
                if app.on_key(k) {
                    break;
                }
            }
            Event::SourceEnded(None) => app.status = Some("end of recording — q quits".into()),
            Event::SourceEnded(Some(e)) => app.status = Some(format!("collection stopped: {e}")),
        }
    }
    stop.store(true, Ordering::SeqCst);
    drop(guard);
    // The recording is put in place when the TUI ends (q, Ctrl-C, a signal); a failed one
    // leaves nothing.
    let recorded = collector.join();
    let _ = input.join();
    match recorded {
        Ok(Ok(Some(r))) => r.finish().and(result),
        Ok(Err(e)) => result.and(Err(e)),
        _ => result,
    }
}
