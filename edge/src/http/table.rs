//! Route tables: [`routes!`] expands a table — one row per route: its name in code and in
//! logs, the methods it serves, its path, who may call it ([`crate::auth::Access`]) and
//! its handler — into an enum with `of` (method and path segments → a [`Match`]), `name`
//! and `handle` (a static `match`, no boxed futures). A path segment written as a name
//! (`id`) is a parameter the handler gets. The Worker's own table is in [`crate::router`];
//! each template has its own in its folder (`templates/<t>/routes.rs`).
//!
//! Matching within a table: the first row whose path matches decides, together with the
//! rows just like it (same path pattern, other methods); `OPTIONS` on such a path is a
//! CORS [`Match::Preflight`], another method is [`Match::MethodNotAllowed`]; a path no row
//! matches is [`Match::None`].

use worker::{Context, Env};

pub(crate) use worker::Method::{
    Delete as DELETE, Get as GET, Head as HEAD, Patch as PATCH, Post as POST, Put as PUT,
};

/// What a handler gets besides the request.
#[derive(Debug)]
pub(crate) struct RequestContext<'a> {
    pub env: &'a Env,
    pub ctx: &'a Context,
    pub request_id: &'a str,
}

/// What a table makes of a method and a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Match<R> {
    /// This row.
    Route(R),
    /// `OPTIONS` on a path of the table.
    Preflight,
    /// A path of the table, another method.
    MethodNotAllowed,
    /// No path of the table.
    None,
}

impl<R> Match<R> {
    /// The matched row as another type.
    pub(crate) fn map<S>(self, f: impl FnOnce(R) -> S) -> Match<S> {
        match self {
            Self::Route(route) => Match::Route(f(route)),
            Self::Preflight => Match::Preflight,
            Self::MethodNotAllowed => Match::MethodNotAllowed,
            Self::None => Match::None,
        }
    }
}

/// Whether two path patterns are written alike (`const`, for [`groups`]).
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// For each row's path pattern, the index of the first row written alike.
pub(crate) const fn groups<const N: usize>(patterns: &[&str; N]) -> [usize; N] {
    let mut out = [0; N];
    let mut i = 0;
    while i < N {
        let mut j = 0;
        while !same(patterns[i], patterns[j]) {
            j += 1;
        }
        out[i] = j;
        i += 1;
    }
    out
}

/// Expands a route table into the enum `$table` (see the module's documentation).
macro_rules! routes {
    (enum $table:ident; $(
        $variant:ident $name:literal [$methods:pat] $path:pat, $access:ty
            => |$req:ident, $rc:ident, $caller:pat_param| $handler:expr;
    )*) => {
        /// A route of this table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[allow(clippy::enum_variant_names)] // a template's rows may share a prefix
        pub(crate) enum $table {
            $($variant,)*
        }

        impl $table {
            /// Each row's group: the first row with the same path pattern (rows of one
            /// path, other methods). Computed at compile time; the patterns are not in the
            /// binary. (Unused by a table with no rows.)
            #[allow(dead_code)]
            const GROUPS: [usize; <[&str]>::len(&[$(stringify!($path)),*])] =
                $crate::http::table::groups(&[$(stringify!($path)),*]);

            /// Match a method and a path's segments.
            #[allow(unused_variables, unused_assignments, unused_mut)]
            pub(crate) fn of(
                method: &worker::Method,
                segments: &[&str],
            ) -> $crate::http::table::Match<Self> {
                use $crate::http::table::Match;
                let mut group: Option<usize> = None;
                let mut row = 0;
                $(
                    if group.is_none_or(|g| g == Self::GROUPS[row]) && matches!(segments, $path) {
                        if *method == worker::Method::Options {
                            return Match::Preflight;
                        }
                        group = Some(Self::GROUPS[row]);
                        if matches!(method, $methods) {
                            return Match::Route(Self::$variant);
                        }
                    }
                    row += 1;
                )*
                if group.is_some() { Match::MethodNotAllowed } else { Match::None }
            }

            /// A stable name for logs.
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }

            /// Run the handler, once its caller is who the table says may call it.
            #[allow(unused_variables)]
            pub(crate) async fn handle(
                self,
                req: worker::Request,
                rc: &$crate::http::table::RequestContext<'_>,
            ) -> Result<worker::Response, $crate::error::ApiError> {
                let path = req.path();
                let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
                match self {
                    $(Self::$variant => {
                        let $path = segments.as_slice() else {
                            return Err($crate::error::ApiError::NotFound);
                        };
                        let $caller =
                            <$access as $crate::auth::Access>::from_request(&req, rc.env).await?;
                        let ($req, $rc) = (req, rc);
                        $handler
                    })*
                }
            }
        }
    };
}

pub(crate) use routes;
