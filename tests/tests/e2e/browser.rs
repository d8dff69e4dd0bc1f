//! CodeLayer's front end in a real browser (issue 41): headless Chromium loads a page that
//! calls `hld --http` as CodeLayer does (fetch with `X-Client`, `X-Client-Version` and
//! `Content-Type: application/json`, so every call is preflighted). From an allowed origin
//! the calls are answered and readable, and an `EventSource` on `/stream/events` receives an
//! event; from any other origin every one fails in the browser and the daemon does nothing.

use hld_e2e::browser::{serve_page, Browser, Tab};
use hld_e2e::launch_params;
use hld_e2e::rest::{call, daemon, Sessions};
use reqwest::StatusCode;
use serde_json::{json, Value};

/// The test page: `run(base, workingDir)` lists the sessions and creates a draft, as
/// CodeLayer's SDK does, each call giving its status and JSON body or the browser's error;
/// `listen(base)` opens CodeLayer's event stream.
const PAGE: &str = r#"<!doctype html>
<title>hld browser test</title>
<script>
async function call(method, url, body) {
  try {
    const response = await fetch(url, {
      method,
      headers: {
        "X-Client": "codelayer",
        "X-Client-Version": "0.1.0-dev",
        "Content-Type": "application/json",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  } catch (e) {
    return { error: String(e) };
  }
}

async function run(base, workingDir) {
  return {
    list: await call("GET", base + "/api/v1/sessions?leavesOnly=true"),
    create: await call("POST", base + "/api/v1/sessions",
      { query: "", working_dir: workingDir, draft: true }),
  };
}

// CodeLayer's one stream; `listen` gives "open" or the error, `received` the first event.
let received;
function listen(base) {
  const types = ["session_status_changed", "new_approval", "approval_resolved",
    "session_settings_changed"];
  const source = new EventSource(base + "/api/v1/stream/events?" +
    types.map((t) => "eventTypes=" + t).join("&"));
  let opened;
  const open = new Promise((resolve) => { opened = resolve; });
  received = new Promise((resolve) => {
    source.onopen = () => opened("open");
    source.onmessage = (message) => {
      source.close();
      resolve({ event: JSON.parse(message.data) });
    };
    source.onerror = () => {
      const error = "EventSource error, readyState " + source.readyState;
      source.close();
      opened(error);
      resolve({ error });
    };
  });
  return open;
}
</script>
"#;

/// The page at `origin` run against the daemon at `base`: the calls' outcomes, and the tab.
async fn run_page(browser: &mut Browser, origin: &str, base: &str, dir: &str) -> (Value, Tab) {
    let tab = browser.open(&format!("{origin}/")).await;
    let expression = format!("run({}, {})", json!(base), json!(dir));
    (browser.evaluate(&tab, &expression).await, tab)
}

/// Every session, as reqwest sees them.
async fn sessions(base: &str) -> Sessions {
    let url = format!("{base}/api/v1/sessions?leavesOnly=true");
    let (status, body) = call(reqwest::Client::new().get(url)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_value(body.clone()).unwrap_or_else(|e| panic!("{e}: {body}"))
}

#[tokio::test]
async fn a_page_of_an_allowed_origin_calls_the_api_and_any_other_origin_fails() {
    let allowed = serve_page(PAGE).await;
    let forbidden = serve_page(PAGE).await;
    let (daemon, _address, base) = daemon(&["--http-allowed-origin", &allowed]);
    let dir = daemon.dir.display().to_string();
    let mut browser = Browser::start().await;

    let before = sessions(&base).await;
    let (refused, tab) = run_page(&mut browser, &forbidden, &base, &dir).await;
    for name in ["list", "create"] {
        let error = refused[name]["error"].as_str().unwrap_or_default();
        assert!(error.contains("Failed to fetch"), "{name}: {refused}");
    }
    let listening = browser.evaluate(&tab, &listen(&base)).await;
    assert!(listening.as_str().unwrap().contains("error"), "{listening}");
    let after = sessions(&base).await;
    assert_eq!(
        after.data.len(),
        before.data.len(),
        "the daemon did nothing"
    );

    let (answered, tab) = run_page(&mut browser, &allowed, &base, &dir).await;
    let list = &answered["list"];
    assert_eq!(list["status"], 200, "{answered}");
    let listed: Sessions =
        serde_json::from_value(list["body"].clone()).unwrap_or_else(|e| panic!("{e}: {answered}"));
    assert_eq!(listed.counts, after.counts);
    // The draft the page made is the daemon's.
    let create = &answered["create"];
    assert_eq!(create["status"], 201, "{answered}");
    let id = create["body"]["data"]["session_id"].as_str().unwrap();
    let made = sessions(&base).await;
    let draft = made.data.iter().find(|s| s.id == id);
    assert_eq!(
        draft.map(|s| s.status.as_str()),
        Some("draft"),
        "{answered}"
    );

    // The stream is open (subscribed) before a session starts; its first event reaches the page.
    assert_eq!(browser.evaluate(&tab, &listen(&base)).await, "open");
    let id = daemon.launch(launch_params("seen by the browser", &daemon.dir));
    let received = browser.evaluate(&tab, "received").await;
    let event = &received["event"];
    assert_eq!(event["type"], "session_status_changed", "{received}");
    assert_eq!(event["data"]["session_id"], id.as_str(), "{received}");
    assert!(event["timestamp"].is_string(), "{received}");
}

/// The page's call that opens its event stream.
fn listen(base: &str) -> String {
    format!("listen({})", json!(base))
}
