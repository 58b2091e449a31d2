//! Verifying an applied change (R88–R113): the modules of `andon verify --gap` and
//! `andon verify --request`, bottom-up (each imports only those above it):
//! 1. [`commands`]: configured checks run and cached;
//! 2. [`diff`]: git snapshots of the working tree, their diffs and hashes;
//! 3. [`proof`]: the shared vocabulary (what is proven, the inputs, a proof, its routing record);
//! 4. [`fix`]: the applied change, the structural proof, the evidence a verify writes;
//! 5. [`expectations`]: what an existing test asserts, and what a change rewrote of it;
//!    [`judged`]: what defines how a fix is judged, and what a change did to it;
//! 6. [`audit`]: the proof-strength audit of a recorded evidence;
//! 7. [`executed`]: proofs read from check runs, and reported commands re-run under a seal;
//! 8. [`red`]: red-first and discrimination proofs in scratch copies of the tree; [`pin`]: the
//!    trivial variants of the changed functions a proof must catch;
//! 9. [`routing`]: the route of a subject and the routing record;
//! 10. [`panel`]: the adversarial panel's rounds;
//! 11. [`prove`]: one routed approach run on the applied change;
//! 12. [`request`]: another tool's `{wire, contract, fixDiff}` request (parsed, its obligations
//!     proven, the andon rule deciding it);
//! 13. [`applied`]: a loop gap's proposal verified on the applied fix.

pub mod applied;
pub mod audit;
pub mod canary;
pub mod commands;
pub mod diff;
pub mod disarmed;
pub mod executed;
pub mod expectations;
pub mod fix;
pub mod judged;
pub mod panel;
pub mod pin;
pub mod proof;
pub mod prove;
pub mod red;
pub mod request;
pub mod routing;
pub mod select;
