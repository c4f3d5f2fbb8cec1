//! The two bundled assets, compiled in. A name is matched exactly: nothing is ever read from
//! the filesystem, so no path can reach a file.

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

const APP_JS: &str = include_str!("../assets/app.js");
const STYLE_CSS: &str = include_str!("../assets/style.css");

pub(crate) async fn serve(Path(name): Path<String>) -> Response {
    let (body, kind) = match name.as_str() {
        "app.js" => (APP_JS, "text/javascript; charset=utf-8"),
        "style.css" => (STYLE_CSS, "text/css; charset=utf-8"),
        _ => return crate::security::refuse(StatusCode::NOT_FOUND, "no such asset"),
    };
    ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}
