//! The protobuf records inside YARN's tokens, with YARN's field numbers (`yarn_protos.proto`,
//! `yarn_security_token.proto`, `Security.proto`; proto2, so every field is optional), so a
//! token fairloom issues is the token a Hadoop client would decode. Only the fields fairloom
//! fills are declared; protobuf skips the others.

#[derive(Clone, PartialEq, prost::Message)]
pub struct ApplicationIdProto {
    #[prost(int32, optional, tag = "1")]
    pub id: Option<i32>,
    #[prost(int64, optional, tag = "2")]
    pub cluster_timestamp: Option<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ApplicationAttemptIdProto {
    #[prost(message, optional, tag = "1")]
    pub application_id: Option<ApplicationIdProto>,
    #[prost(int32, optional, tag = "2")]
    pub attempt_id: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ContainerIdProto {
    #[prost(message, optional, tag = "1")]
    pub app_id: Option<ApplicationIdProto>,
    #[prost(message, optional, tag = "2")]
    pub app_attempt_id: Option<ApplicationAttemptIdProto>,
    /// The epoch in the bits above 40, the sequence number below.
    #[prost(int64, optional, tag = "3")]
    pub id: Option<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeIdProto {
    #[prost(string, optional, tag = "1")]
    pub host: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub port: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ResourceProto {
    #[prost(int64, optional, tag = "1")]
    pub memory: Option<i64>,
    #[prost(int32, optional, tag = "2")]
    pub virtual_cores: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PriorityProto {
    #[prost(int32, optional, tag = "1")]
    pub priority: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct AmrmTokenIdentifierProto {
    #[prost(message, optional, tag = "1")]
    pub app_attempt_id: Option<ApplicationAttemptIdProto>,
    #[prost(int32, optional, tag = "2")]
    pub key_id: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NmTokenIdentifierProto {
    #[prost(message, optional, tag = "1")]
    pub app_attempt_id: Option<ApplicationAttemptIdProto>,
    #[prost(message, optional, tag = "2")]
    pub node_id: Option<NodeIdProto>,
    #[prost(string, optional, tag = "3")]
    pub app_submitter: Option<String>,
    #[prost(int32, optional, tag = "4")]
    pub key_id: Option<i32>,
}

/// YARN's ContainerTypeProto.
pub const CONTAINER_TYPE_APPLICATION_MASTER: i32 = 1;
pub const CONTAINER_TYPE_TASK: i32 = 2;

#[derive(Clone, PartialEq, prost::Message)]
pub struct ContainerTokenIdentifierProto {
    #[prost(message, optional, tag = "1")]
    pub container_id: Option<ContainerIdProto>,
    /// The node's id, `host:port`.
    #[prost(string, optional, tag = "2")]
    pub nm_host_addr: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub app_submitter: Option<String>,
    #[prost(message, optional, tag = "4")]
    pub resource: Option<ResourceProto>,
    #[prost(int64, optional, tag = "5")]
    pub expiry_time_stamp: Option<i64>,
    #[prost(int32, optional, tag = "6")]
    pub master_key_id: Option<i32>,
    #[prost(int64, optional, tag = "7")]
    pub rm_identifier: Option<i64>,
    #[prost(message, optional, tag = "8")]
    pub priority: Option<PriorityProto>,
    #[prost(int64, optional, tag = "9")]
    pub creation_time: Option<i64>,
    #[prost(int32, optional, tag = "12")]
    pub container_type: Option<i32>,
}

/// Hadoop's `TokenProto`: a token on the wire.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TokenProto {
    #[prost(bytes = "vec", tag = "1")]
    pub identifier: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    pub password: Vec<u8>,
    #[prost(string, tag = "3")]
    pub kind: String,
    #[prost(string, tag = "4")]
    pub service: String,
}

/// `CredentialsKVProto` and `CredentialsProto`: the token file's version-1 layout.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CredentialsKvProto {
    #[prost(string, tag = "1")]
    pub alias: String,
    #[prost(message, optional, tag = "2")]
    pub token: Option<TokenProto>,
    #[prost(bytes = "vec", optional, tag = "3")]
    pub secret: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct CredentialsProto {
    #[prost(message, repeated, tag = "1")]
    pub tokens: Vec<CredentialsKvProto>,
    #[prost(message, repeated, tag = "2")]
    pub secrets: Vec<CredentialsKvProto>,
}
