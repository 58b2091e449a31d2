//! The routing decision table (filled in by the routing work).
