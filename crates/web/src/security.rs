//! The guard every request passes: Host check, access token, the POST rules (read-only,
//! cross-site, CSRF header), and the security headers on every answer.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'";
pub(crate) const CSRF_HEADER: &str = "x-csrf-token";
const COOKIE: &str = "dm_token";

/// Set on a request whose `X-Csrf-Token` header matched; a handler then needs no form field.
#[derive(Clone, Copy)]
pub(crate) struct CsrfChecked;

/// A fresh CSRF token: 32 random bytes, hex.
pub(crate) fn new_csrf() -> Result<String, getrandom::Error> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// A token goes in a URL and a cookie unescaped, so it is limited to URL-safe characters.
pub(crate) fn token_ok(t: &str) -> bool {
    t.len() >= crate::MIN_TOKEN_LEN && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"._~-".contains(&b))
}

/// Equal without an early exit, so that the time taken says nothing about where a guess differs.
pub(crate) fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    std::hint::black_box(a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y))) == 0
}

/// What the guard holds every request against, fixed when the server starts.
pub(crate) struct Rules {
    /// This server's CSRF token.
    pub(crate) csrf: String,
    /// The access token (`--token`), when one is required.
    pub(crate) token: Option<String>,
    /// `--read-only`: every POST is refused.
    pub(crate) read_only: bool,
    /// The Host values accepted (lower case); `None` when listening beyond loopback, where the
    /// token guards instead.
    pub(crate) allowed_hosts: Option<Vec<String>>,
}

pub(crate) async fn guard(State(st): State<Arc<Rules>>, req: Request, next: Next) -> Response {
    let api = req.uri().path().starts_with("/api/");
    let mut resp = check(&st, req, next).await;
    let h = resp.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // `same-origin`, not `no-referrer`: no address leaves for another site either way, but with
    // `no-referrer` a browser sends `Origin: null` on this server's own form posts.
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    if api {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    resp
}

async fn check(st: &Rules, mut req: Request, next: Next) -> Response {
    let host = req.headers().get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
    if let Some(allowed) = &st.allowed_hosts {
        if !allowed.contains(&host) {
            return refuse(
                StatusCode::MISDIRECTED_REQUEST,
                "this server answers only to its own loopback address (Host header refused)",
            );
        }
    }
    if let Some(token) = &st.token {
        match token_in_query(req.uri().query()) {
            Some(given) if ct_eq(given.as_bytes(), token.as_bytes()) => {
                if req.method() == Method::GET && !req.uri().path().starts_with("/api/") {
                    return login_redirect(req.uri().path(), req.uri().query().unwrap_or(""), token);
                }
            }
            Some(_) => return unauthorized(),
            None if has_token(req.headers(), token) => {}
            None => return unauthorized(),
        }
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        if st.read_only {
            return refuse(StatusCode::FORBIDDEN, "read-only server");
        }
        if let Some(why) = cross_site(req.headers(), &host) {
            return refuse(StatusCode::FORBIDDEN, why);
        }
        if let Some(v) = req.headers().get(CSRF_HEADER) {
            if !ct_eq(v.as_bytes(), st.csrf.as_bytes()) {
                return refuse(StatusCode::FORBIDDEN, "wrong CSRF token: reload the page");
            }
            req.extensions_mut().insert(CsrfChecked);
        }
    }
    next.run(req).await
}

/// The `token` query parameter (taken raw: a good token has no characters to escape).
fn token_in_query(q: Option<&str>) -> Option<&str> {
    q?.split('&').find_map(|kv| kv.strip_prefix("token="))
}

fn has_token(h: &HeaderMap, token: &str) -> bool {
    let bearer = h
        .get_all(header::AUTHORIZATION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.strip_prefix("Bearer "))
        .any(|t| ct_eq(t.trim().as_bytes(), token.as_bytes()));
    let cookie = h
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().strip_prefix("dm_token="))
        .any(|t| ct_eq(t.as_bytes(), token.as_bytes()));
    bearer || cookie
}

/// A POST sent by another site's page. A browser says where a request comes from in
/// `Sec-Fetch-Site` (set by the browser itself, no page can forge it): only `same-origin` (this
/// server's own page) and `none` (the user's own action, such as a bookmark) pass. A browser
/// without it (and curl, which sends no `Origin`) is judged by `Origin`: absent or this server's
/// own. `Origin: null` is what a browser sends when it hides the origin (an opaque origin, or a
/// referrer policy of `no-referrer`): without `Sec-Fetch-Site` it cannot be told from a sandboxed
/// page of another site, so it is refused; the CSRF token is required besides, in every case.
fn cross_site(h: &HeaderMap, host: &str) -> Option<&'static str> {
    if let Some(site) = h.get("sec-fetch-site") {
        return match site.as_bytes() {
            b"same-origin" | b"none" => None,
            _ => Some("request from another site refused: use this server's own page"),
        };
    }
    match h.get(header::ORIGIN).map(|v| v.to_str().unwrap_or("")) {
        Some(o) if !o.eq_ignore_ascii_case(&format!("http://{host}")) => {
            Some("request from another origin refused: use this server's own page")
        }
        _ => None,
    }
}

/// First visit with the token: keep it in a cookie and drop it from the address bar (and so
/// from the history and any copied link).
fn login_redirect(path: &str, query: &str, token: &str) -> Response {
    let rest: Vec<&str> = query.split('&').filter(|kv| !kv.is_empty() && !kv.starts_with("token=")).collect();
    let mut to = if path.starts_with('/') && !path.starts_with("//") { path.to_string() } else { "/".to_string() };
    if !rest.is_empty() {
        to.push('?');
        to.push_str(&rest.join("&"));
    }
    let cookie = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict");
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let (Ok(loc), Ok(c)) = (HeaderValue::from_str(&to), HeaderValue::from_str(&cookie)) {
        r.headers_mut().insert(header::LOCATION, loc);
        r.headers_mut().insert(header::SET_COOKIE, c);
    }
    r
}

fn unauthorized() -> Response {
    let mut r = refuse(
        StatusCode::UNAUTHORIZED,
        "this server needs its access token: open the URL that `diskmeter serve` printed",
    );
    r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    r
}

/// A refusal as one plain-text line.
pub(crate) fn refuse(status: StatusCode, msg: &str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{msg}\n")).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_rules() {
        assert!(token_ok("abcdefghijklmnop"));
        assert!(!token_ok("short"));
        assert!(!token_ok("abcdefghijklmnop;x"));
        assert!(ct_eq(b"abc", b"abc"));
        assert!(!ct_eq(b"abc", b"abd"));
        assert!(!ct_eq(b"abc", b"ab"));
        assert_eq!(token_in_query(Some("a=1&token=xyz")), Some("xyz"));
        assert_eq!(token_in_query(Some("a=1")), None);
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn what_a_real_browser_sends_passes_and_other_sites_do_not() {
        let host = "127.0.0.1:8080";
        // Chromium's form post from this server's own page under a no-referrer policy.
        assert_eq!(cross_site(&headers(&[("sec-fetch-site", "same-origin"), ("origin", "null")]), host), None);
        assert_eq!(
            cross_site(&headers(&[("sec-fetch-site", "same-origin"), ("origin", "http://127.0.0.1:8080")]), host),
            None
        );
        assert_eq!(cross_site(&headers(&[("sec-fetch-site", "none")]), host), None);
        // curl: no Origin, no Sec-Fetch-Site.
        assert_eq!(cross_site(&HeaderMap::new(), host), None);
        assert_eq!(cross_site(&headers(&[("origin", "http://127.0.0.1:8080")]), host), None);
        // Another site, another port on the same host (same-site), a hidden origin without
        // Sec-Fetch-Site.
        for h in [
            headers(&[("sec-fetch-site", "cross-site"), ("origin", "http://evil.example")]),
            headers(&[("sec-fetch-site", "same-site"), ("origin", "http://127.0.0.1:9999")]),
            headers(&[("sec-fetch-site", "cross-site"), ("origin", "null")]),
            headers(&[("origin", "http://evil.example")]),
            headers(&[("origin", "null")]),
        ] {
            assert!(cross_site(&h, host).is_some(), "{h:?}");
        }
    }

    #[test]
    fn csrf_is_64_hex() {
        let a = new_csrf().expect("random");
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, new_csrf().expect("random"));
    }
}
