//! The option setters every request builder has, written once as a macro
//! so that the client's [`Call`](crate::Call) and the manager's routed
//! calls offer the same ones: a builder holds a
//! [`RequestOptions`](crate::RequestOptions) and invokes
//! `request_option_setters!` with that field's name in an inherent impl.

/// The option setters of every request builder ([`Call`], and the
/// manager's routed calls), written once: `$field` is the builder's
/// [`RequestOptions`]. Each sets one option and keeps the others.
#[doc(hidden)]
#[macro_export]
macro_rules! request_option_setters {
    ($field:ident) => {
        /// Every option at once (replacing what was set before).
        pub fn options(mut self, opts: $crate::RequestOptions) -> Self {
            self.$field = opts;
            self
        }

        /// This request's timeout (instead of the client's).
        pub fn timeout(mut self, timeout: ::std::time::Duration) -> Self {
            self.$field = self.$field.timeout(timeout);
            self
        }

        /// When the timeout runs out: see [`RequestOptions::deadline`]($crate::RequestOptions::deadline).
        pub fn deadline(mut self, deadline: $crate::Deadline) -> Self {
            self.$field = self.$field.deadline(deadline);
            self
        }

        /// The longest the request may take in total, progress or not.
        pub fn max_total(mut self, max: ::std::time::Duration) -> Self {
            self.$field = self.$field.max_total(max);
            self
        }

        /// Calls `f` with each progress notification: see
        /// [`RequestOptions::on_progress`]($crate::RequestOptions::on_progress).
        pub fn on_progress(
            mut self,
            f: impl Fn(&$crate::types::Progress) + Send + Sync + 'static,
        ) -> Self {
            self.$field = self.$field.on_progress(f);
            self
        }

        /// Whether the request may be sent again after its session expired.
        pub fn replay(mut self, replay: $crate::Replay) -> Self {
            self.$field = self.$field.replay(replay);
            self
        }

        /// Cancels the request when `token` is cancelled.
        pub fn cancel_token(mut self, token: $crate::CancellationToken) -> Self {
            self.$field = self.$field.cancel_token(token);
            self
        }

        /// Carries a W3C trace context in the request's `_meta`.
        pub fn trace_context(mut self, trace: $crate::TraceContext) -> Self {
            self.$field = self.$field.trace_context(trace);
            self
        }

        /// How the request uses the client's cache: see [`CacheMode`]($crate::CacheMode).
        pub fn cache(mut self, mode: $crate::CacheMode) -> Self {
            self.$field = self.$field.cache(mode);
            self
        }
    };
}
