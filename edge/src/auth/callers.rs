//! Callers as types: who may call a route. The route table (`crate::router`) names one of
//! these per route; the router obtains it from the request ([`Access::from_request`])
//! before the handler runs, so a handler's signature says who may call it.
//!
//! - [`Open`]: anyone (the handler checks whatever else it needs: the panel's `site_key`,
//!   a debug flag);
//! - [`Operator`]: the operator token;
//! - [`SecretCaller`]: the site's secret key, rate limits checked;
//! - [`AnyKeyCaller`]: the site's secret key, or its public key from an allowed origin,
//!   rate limits checked;
//! - [`Admitted`]: one of the two keys with its rate limits *not yet* checked: its
//!   [`Admission`] is for the handler to check (a turn checks it while it reads the
//!   conversation).

use std::ops::Deref;

use worker::{Env, Request};

use super::{Admission, Caller, Keys, admitted_caller, checked_caller, operator};
use crate::error::ApiError;

/// Who may call a route, obtained from the request.
pub(crate) trait Access: Sized {
    /// The caller the request presents, or why it may not call.
    async fn from_request(req: &Request, env: &Env) -> Result<Self, ApiError>;
}

/// Anyone may call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Open;

impl Access for Open {
    async fn from_request(_req: &Request, _env: &Env) -> Result<Self, ApiError> {
        Ok(Self)
    }
}

/// The operator (`Authorization: Bearer <OPERATOR_TOKEN>`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Operator;

impl Access for Operator {
    async fn from_request(req: &Request, env: &Env) -> Result<Self, ApiError> {
        operator(req, env).map(|()| Self)
    }
}

/// A caller with the site's secret key.
#[derive(Debug)]
pub(crate) struct SecretCaller(Caller);

/// A caller with the site's secret key or its public key (from an allowed origin).
#[derive(Debug)]
pub(crate) struct AnyKeyCaller(Caller);

/// A key-holding caller whose rate limits are still to be checked ([`Admission`]).
#[derive(Debug)]
pub(crate) struct Admitted<C> {
    pub caller: C,
    pub admission: Admission,
}

/// The caller types that hold a site key, by the keys they accept.
trait KeyCaller: Sized {
    const KEYS: Keys;
    fn wrap(caller: Caller) -> Self;
}

macro_rules! key_caller {
    ($name:ident, $keys:expr) => {
        impl KeyCaller for $name {
            const KEYS: Keys = $keys;
            fn wrap(caller: Caller) -> Self {
                Self(caller)
            }
        }

        impl Access for $name {
            async fn from_request(req: &Request, env: &Env) -> Result<Self, ApiError> {
                checked_caller(req, env, $keys).await.map(Self)
            }
        }

        impl Deref for $name {
            type Target = Caller;
            fn deref(&self) -> &Caller {
                &self.0
            }
        }

        impl $name {
            /// The authenticated key's site and kind.
            pub(crate) fn into_inner(self) -> Caller {
                self.0
            }
        }
    };
}

key_caller!(SecretCaller, Keys::Secret);
key_caller!(AnyKeyCaller, Keys::Any);

impl<C: KeyCaller> Access for Admitted<C> {
    async fn from_request(req: &Request, env: &Env) -> Result<Self, ApiError> {
        let (caller, admission) = admitted_caller(req, env, C::KEYS).await?;
        Ok(Self {
            caller: C::wrap(caller),
            admission,
        })
    }
}
