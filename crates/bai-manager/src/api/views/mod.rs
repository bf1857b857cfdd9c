//! Replies built from domain values: the HTTP edge turns what the layers below hold (apps,
//! readings, background tasks, services, autoscaling rules) into the wire's bodies here, so
//! nothing below the edge names `bai-api`.

pub mod apps;
pub mod bgtask;
pub mod services;
pub mod stats;
