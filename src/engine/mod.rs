//! The engine: layered Kafka configuration, merged by one precedence, explained, validated and
//! rendered. It knows nothing of Kubernetes; the operator and the CLI fill a [`Request`].

pub mod args;
pub mod catalogue;
pub mod evaluate;
pub mod globals;
pub mod layers;
pub mod mirror_maker;
pub mod outcome;
pub mod properties;
pub mod reference;
pub mod render;
pub mod secret;
pub mod sensitive;
pub mod sources;
pub mod spec;
pub mod suggest;
pub mod text_order;
pub mod validate;

pub use evaluate::{Evaluation, Request, RoleView, evaluate};
