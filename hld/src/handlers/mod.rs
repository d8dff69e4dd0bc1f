//! The method table: which handler serves which method.

mod approvals;
mod control;
mod introspection;
mod sessions;

pub use introspection::{HealthCache, VERSION};

use hld_client::protocol as p;

use crate::rpc::Router;

/// Every method the daemon serves.
pub fn router() -> Router {
    let mut t = Router::default();
    t.route_encoded::<p::Health, _, _>(introspection::health)
        .route::<p::Initialize, _, _>(introspection::initialize)
        .route::<p::Version, _, _>(introspection::version)
        .route::<p::ListMethods, _, _>(introspection::list_methods)
        .route::<p::DescribeMethods, _, _>(introspection::describe_methods)
        .route::<p::SetLogLevel, _, _>(introspection::set_log_level)
        .route::<p::Shutdown, _, _>(introspection::shutdown)
        .route::<p::LaunchSession, _, _>(sessions::launch_session)
        .route::<p::ListSessions, _, _>(sessions::list_sessions)
        .route::<p::GetSessionState, _, _>(sessions::get_session_state)
        .route::<p::GetConversation, _, _>(sessions::get_conversation)
        .route::<p::ContinueSession, _, _>(sessions::continue_session)
        .route::<p::InterruptSession, _, _>(sessions::interrupt_session)
        .route::<p::FetchApprovals, _, _>(approvals::fetch_approvals)
        .route::<p::SendDecision, _, _>(approvals::send_decision)
        .route::<p::CreateApproval, _, _>(approvals::create_approval)
        .route::<p::GetApproval, _, _>(approvals::get_approval)
        .route::<p::UpdateSessionTitle, _, _>(control::update_session_title)
        .route::<p::ArchiveSession, _, _>(control::archive_session)
        .route::<p::BulkArchiveSessions, _, _>(control::bulk_archive_sessions)
        .route::<p::GetSessionLeaves, _, _>(control::get_session_leaves)
        .route::<p::UpdateSessionSettings, _, _>(control::update_session_settings)
        .route::<p::GetRecentPaths, _, _>(control::get_recent_paths)
        .route::<p::SearchSessions, _, _>(control::search_sessions)
        .route::<p::DeleteSession, _, _>(control::delete_session)
        .connection::<p::Subscribe>();
    t
}
