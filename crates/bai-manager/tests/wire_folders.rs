//! The folders area's wire contract: every JSON answer of the real router reads as its
//! `bai_api::folders` type and writes back unchanged, and every request is built from its
//! request type.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod common;

use bai_api::Problem;
use bai_api::check::round_trip;
use bai_api::folders::{
    CreateFolder, DeleteFiles, Done, FileType, Folder, FolderId, FolderRef, FolderStatus, Hosts,
    IdLookup, Listing, Mkdir, MkdirAnswer, MkdirRefused, MoveFile, Ownership, Paths, Permission,
    RenameFile, RenameFolder, RequestDownload, RequestUpload, Ticket, UsageMode,
};
use common::{ADMIN, Api, Keypair, Reply, USER};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// A request body from its type.
fn body<T: Serialize>(t: &T) -> Value {
    serde_json::to_value(t).expect("a request type writes JSON")
}

/// The answer, checked for its status and read as `T` (round trip).
fn answer<T: Serialize + DeserializeOwned>(r: &Reply, status: u16, what: &str) -> T {
    assert_eq!(
        r.status,
        status,
        "{what}: {}",
        String::from_utf8_lossy(&r.body)
    );
    round_trip::<T>(&r.json()).unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// An answer without a body.
fn empty(r: &Reply, status: u16, what: &str) {
    assert_eq!(
        r.status,
        status,
        "{what}: {}",
        String::from_utf8_lossy(&r.body)
    );
    assert!(r.body.is_empty(), "{what}: {:?}", r.body);
}

fn header<'a>(r: &'a Reply, name: &str) -> Option<&'a str> {
    r.headers.get(name).and_then(|v| v.to_str().ok())
}

fn new_folder(name: &str) -> CreateFolder {
    CreateFolder {
        name: name.into(),
        host: None,
        group: None,
        permission: Some(Permission::ReadWrite),
        usage_mode: Some(UsageMode::General),
        quota: None,
        unmanaged_path: None,
        cloneable: Some(false),
    }
}

async fn create(api: &Api, who: Keypair, req: &CreateFolder) -> Folder {
    let r = api.call("POST", "/folders", who, &body(req)).await;
    answer(&r, 201, "create")
}

/// The path and query of a ticket's URL, with its token.
fn ticket_path(api: &Api, t: &Ticket, path: &str) -> String {
    assert_eq!(t.url, format!("http://{}{path}", api.addr), "{t:?}");
    format!("{path}?token={}", t.token)
}

async fn tus_patch(api: &Api, t: &Ticket, offset: usize, data: &[u8]) -> Reply {
    api.send(
        "PATCH",
        &ticket_path(api, t, "/storage/upload"),
        None,
        "application/offset+octet-stream",
        &[
            ("upload-offset", offset.to_string()),
            ("tus-resumable", "1.0.0".to_string()),
        ],
        data.to_vec(),
    )
    .await
}

#[tokio::test]
async fn folders_answer_as_their_types() {
    let api = Api::start_with_agent().await;

    let r = api
        .call("GET", "/folders/_/hosts", USER, &Value::Null)
        .await;
    let hosts: Hosts = answer(&r, 200, "hosts");
    assert!(hosts.allowed.contains(&hosts.default), "{hosts:?}");
    assert!(hosts.volume_info.contains_key(&hosts.default), "{hosts:?}");

    let mut req = new_folder("data");
    req.host = Some(hosts.default.clone());
    let folder = create(&api, USER, &req).await;
    assert_eq!(folder.name, "data");
    assert_eq!(folder.ownership_type, Ownership::User);
    assert!(folder.is_owner);
    assert_eq!(folder.user.as_deref(), Some("u-user"));
    assert_eq!(folder.quota, None);

    // The same name again: a conflict, as a problem.
    let r = api.call("POST", "/folders", USER, &body(&req)).await;
    let p: Problem = answer(&r, 409, "duplicate create");
    assert!(p.msg.contains("data"), "{p:?}");

    // A minimal request (only the name) works too.
    let other = create(&api, USER, &{
        let mut r = new_folder("other");
        r.permission = None;
        r.usage_mode = None;
        r.cloneable = None;
        r
    })
    .await;
    assert_eq!(other.permission, Permission::ReadWrite);
    assert_eq!(other.usage_mode, UsageMode::General);

    let r = api.call("GET", "/folders", USER, &Value::Null).await;
    let list: Vec<Folder> = answer(&r, 200, "list");
    assert_eq!(list.len(), 2, "{list:?}");

    let lookup = body(&IdLookup {
        name: "data".into(),
    });
    let r = api.call("GET", "/folders/_/id", USER, &lookup).await;
    let found: FolderRef = answer(&r, 200, "id by body");
    assert_eq!(found.id, folder.id);
    let r = api
        .call("GET", "/folders/_/id?name=data", USER, &Value::Null)
        .await;
    let found: FolderRef = answer(&r, 200, "id by query");
    assert_eq!(found.id, folder.id);
    let r = api
        .call("GET", "/folders/_/id?name=nope", USER, &Value::Null)
        .await;
    let _: Problem = answer(&r, 404, "id of an unknown name");

    let id = &folder.id;
    let r = api
        .call("GET", &format!("/folders/{id}"), USER, &Value::Null)
        .await;
    let info: Folder = answer(&r, 200, "info");
    assert_eq!(info.id, folder.id);

    files_and_transfers(&api, id).await;

    let r = api
        .call("GET", &format!("/folders/{id}"), USER, &Value::Null)
        .await;
    let info: Folder = answer(&r, 200, "info after the transfers");
    assert_eq!((info.num_files, info.used_bytes), (1, 11), "{info:?}");

    let rename = body(&RenameFolder {
        new_name: "renamed".into(),
    });
    let r = api
        .call("POST", &format!("/folders/{id}/rename"), USER, &rename)
        .await;
    empty(&r, 201, "rename");
    let r = api
        .call(
            "POST",
            &format!("/folders/{}/rename", other.id),
            USER,
            &rename,
        )
        .await;
    let _: Problem = answer(&r, 409, "rename onto a taken name");

    let r = api
        .call("DELETE", &format!("/folders/{id}"), USER, &Value::Null)
        .await;
    empty(&r, 204, "delete by path (to the trash)");
    let r = api
        .call("GET", &format!("/folders/{id}"), USER, &Value::Null)
        .await;
    let p: Problem = answer(&r, 409, "info of a folder in the trash");
    assert!(p.kind.ends_with("vfolder-in-trash"), "{p:?}");
    let r = api
        .call(
            "POST",
            "/session",
            USER,
            &json!({"image": common::IMAGE, "clientSessionToken": "trashmount",
                    "config": {"mount_ids": [id.clone()]}}),
        )
        .await;
    let p: Problem = answer(&r, 400, "mount of a folder in the trash");
    assert!(p.msg.contains("in the trash"), "{p:?}");
    let this = body(&FolderId { id: id.clone() });
    let r = api
        .call("POST", "/folders/restore-from-trash-bin", USER, &this)
        .await;
    empty(&r, 204, "restore");
    let r = api
        .call("GET", &format!("/folders/{id}"), USER, &Value::Null)
        .await;
    let _: Folder = answer(&r, 200, "info of a restored folder");
    let r = api.call("POST", "/folders/purge", USER, &this).await;
    let _: Problem = answer(&r, 409, "purge of a folder not in the trash");

    let by_body = body(&FolderId {
        id: other.id.clone(),
    });
    let r = api.call("DELETE", "/folders", USER, &by_body).await;
    empty(&r, 204, "delete by body");
    let r = api.call("GET", "/folders", USER, &Value::Null).await;
    let list: Vec<Folder> = answer(&r, 200, "list after deleting");
    assert!(
        list.iter()
            .any(|f| f.name == other.name && f.status == FolderStatus::DeletePending),
        "{list:?}"
    );
    let r = api.call("POST", "/folders/purge", USER, &by_body).await;
    empty(&r, 204, "purge");
    let r = api
        .call(
            "DELETE",
            &format!("/folders/{id}/force"),
            USER,
            &Value::Null,
        )
        .await;
    empty(&r, 204, "force delete");
    let r = api.call("GET", "/folders", USER, &Value::Null).await;
    let list: Vec<Folder> = answer(&r, 200, "list after purging");
    assert!(list.is_empty(), "{list:?}");
    let r = api
        .call("GET", &format!("/folders/{id}"), USER, &Value::Null)
        .await;
    let _: Problem = answer(&r, 404, "info of a purged folder");
}

/// Uploads, listing, directories, renames, moves, downloads and deletion in folder `id`.
async fn files_and_transfers(api: &Api, id: &str) {
    let call = |method: &'static str, op: &'static str, b: Value| async move {
        api.call(method, &format!("/folders/{id}/{op}"), USER, &b)
            .await
    };

    // A zero-byte upload needs no PATCH.
    let r = call(
        "POST",
        "request-upload",
        body(&RequestUpload {
            path: "empty.txt".into(),
            size: None,
        }),
    )
    .await;
    let _: Ticket = answer(&r, 200, "request-upload of an empty file");

    let r = call(
        "POST",
        "request-upload",
        body(&RequestUpload {
            path: "dir/a.txt".into(),
            size: Some(11),
        }),
    )
    .await;
    let ticket: Ticket = answer(&r, 200, "request-upload");
    let r = tus_patch(api, &ticket, 0, b"hello").await;
    empty(&r, 204, "TUS PATCH");
    assert_eq!(header(&r, "upload-offset"), Some("5"));
    let r = api
        .send(
            "HEAD",
            &ticket_path(api, &ticket, "/storage/upload"),
            None,
            "",
            &[],
            Vec::new(),
        )
        .await;
    empty(&r, 200, "TUS HEAD");
    assert_eq!(header(&r, "upload-offset"), Some("5"));
    assert_eq!(header(&r, "upload-length"), Some("11"));
    let r = tus_patch(api, &ticket, 3, b"lo world").await;
    let _: Problem = answer(&r, 409, "TUS PATCH at the wrong offset");
    let r = tus_patch(api, &ticket, 5, b" world").await;
    empty(&r, 204, "TUS PATCH to the end");
    // The token is spent.
    let r = tus_patch(api, &ticket, 11, b"!").await;
    let _: Problem = answer(&r, 403, "TUS PATCH with a spent token");

    let r = api
        .call(
            "GET",
            &format!("/folders/{id}/files?path=."),
            USER,
            &Value::Null,
        )
        .await;
    let listing: Listing = answer(&r, 200, "files");
    let kinds: Vec<(&str, FileType)> = listing
        .items
        .iter()
        .map(|e| (e.name.as_str(), e.kind))
        .collect();
    assert_eq!(
        kinds,
        [("dir", FileType::Directory), ("empty.txt", FileType::File)]
    );
    let r = api
        .call(
            "GET",
            &format!("/folders/{id}/files?path=dir"),
            USER,
            &Value::Null,
        )
        .await;
    let listing: Listing = answer(&r, 200, "files of a subdirectory");
    assert_eq!(listing.items.len(), 1);
    assert_eq!(listing.items[0].size, 11);

    let mkdir = Mkdir {
        path: Paths::Many(vec!["x".into(), "y/z".into()]),
        parents: Some(true),
        exist_ok: Some(false),
    };
    let r = call("POST", "mkdir", body(&mkdir)).await;
    let made: MkdirAnswer = answer(&r, 201, "mkdir");
    assert_eq!(made.results.success.len(), 2, "{made:?}");
    let again = Mkdir {
        path: Paths::One("x".into()),
        parents: None,
        exist_ok: None,
    };
    let r = call("POST", "mkdir", body(&again)).await;
    // Every path failed: 400, a problem that clients print (the official client reads its
    // `title`, bai its `msg`), with the results beside it.
    let failed: MkdirRefused = answer(&r, 400, "mkdir of an existing directory");
    assert_eq!(failed.results.failed.len(), 1, "{failed:?}");
    assert!(failed.results.success.is_empty(), "{failed:?}");
    let why = failed.results.failed[0].msg.clone().unwrap_or_default();
    assert!(!why.is_empty(), "{failed:?}");
    assert!(
        failed.problem.kind.ends_with("/invalid-api-params"),
        "{failed:?}"
    );
    assert_eq!(failed.problem.title, "Invalid API parameters.");
    assert_eq!(failed.problem.msg, why);
    assert!(why.contains("x already exists"), "{failed:?}");

    let r = call(
        "POST",
        "rename-file",
        body(&RenameFile {
            target_path: "dir/a.txt".into(),
            new_name: "b.txt".into(),
        }),
    )
    .await;
    let _: Done = answer(&r, 200, "rename-file");
    let r = call(
        "POST",
        "move-file",
        body(&MoveFile {
            src: "dir/b.txt".into(),
            dst: "x".into(),
        }),
    )
    .await;
    let _: Done = answer(&r, 200, "move-file");

    let r = call(
        "POST",
        "request-download",
        body(&RequestDownload {
            path: "x/b.txt".into(),
        }),
    )
    .await;
    let ticket: Ticket = answer(&r, 200, "request-download");
    let r = api
        .send(
            "GET",
            &ticket_path(api, &ticket, "/storage/download"),
            None,
            "",
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(r.status, 200, "download: {:?}", r.body);
    assert_eq!(r.content_type(), "application/octet-stream");
    assert_eq!(&r.body[..], b"hello world");
    let r = call(
        "POST",
        "request-download",
        body(&RequestDownload {
            path: "dir/a.txt".into(),
        }),
    )
    .await;
    let _: Problem = answer(&r, 404, "request-download of a moved file");

    let dirs = DeleteFiles {
        files: vec!["y".into(), "dir".into()],
        recursive: None,
    };
    let r = call("DELETE", "delete-files", body(&dirs)).await;
    let p: Problem = answer(&r, 400, "delete-files of directories without recursive");
    assert!(p.msg.contains("recursive"), "{p:?}");
    let r = call(
        "DELETE",
        "delete-files",
        body(&DeleteFiles {
            recursive: Some(true),
            ..dirs
        }),
    )
    .await;
    let _: Done = answer(&r, 200, "delete-files");
    let r = call(
        "DELETE",
        "delete-files",
        body(&DeleteFiles {
            files: vec!["empty.txt".into()],
            recursive: None,
        }),
    )
    .await;
    let _: Done = answer(&r, 200, "delete-files of a file");
}

#[tokio::test]
async fn a_project_folder_answers_as_its_types() {
    let api = Api::start().await;
    assert!(
        api.m
            .store
            .create_project("proj", "a project")
            .expect("project")
    );
    api.m
        .store
        .set_project_member("proj", "u-user", true)
        .expect("member");

    let mut req = new_folder("shared");
    req.group = Some("proj".into());
    req.permission = Some(Permission::ReadOnly);
    // Only administrators create project folders.
    let r = api.call("POST", "/folders", USER, &body(&req)).await;
    let _: Problem = answer(&r, 403, "a user's project folder");
    let folder = create(&api, ADMIN, &req).await;
    assert_eq!(folder.ownership_type, Ownership::Group);
    assert_eq!(folder.kind, Ownership::Group);
    assert_eq!(folder.user, None);
    assert_eq!(folder.group.as_deref(), Some("proj"));
    assert_eq!(folder.permission, Permission::ReadOnly);

    // A member sees it, does not own it, and may not write it.
    let r = api.call("GET", "/folders", USER, &Value::Null).await;
    let list: Vec<Folder> = answer(&r, 200, "a member's list");
    assert_eq!(list.len(), 1, "{list:?}");
    assert!(!list[0].is_owner);
    let mkdir = body(&Mkdir {
        path: Paths::One("x".into()),
        parents: None,
        exist_ok: None,
    });
    let r = api
        .call(
            "POST",
            &format!("/folders/{}/mkdir", folder.id),
            USER,
            &mkdir,
        )
        .await;
    let _: Problem = answer(&r, 403, "a member's mkdir in a read-only folder");
    let r = api
        .call(
            "POST",
            &format!("/folders/{}/mkdir", folder.id),
            ADMIN,
            &mkdir,
        )
        .await;
    let _: MkdirAnswer = answer(&r, 201, "an administrator's mkdir");

    let r = api
        .call(
            "DELETE",
            &format!("/folders/{}", folder.id),
            USER,
            &Value::Null,
        )
        .await;
    let _: Problem = answer(&r, 403, "a member's delete");
    let r = api
        .call(
            "DELETE",
            "/folders",
            ADMIN,
            &body(&FolderId { id: folder.id }),
        )
        .await;
    empty(&r, 204, "an administrator's delete");
}

#[tokio::test]
async fn bad_requests_are_problems() {
    let api = Api::start().await;
    let mut req = new_folder("../x");
    let r = api.call("POST", "/folders", USER, &body(&req)).await;
    let _: Problem = answer(&r, 400, "a bad name");
    req.name = "fine".into();
    req.host = Some("nowhere:volume".into());
    let r = api.call("POST", "/folders", USER, &body(&req)).await;
    let p: Problem = answer(&r, 400, "an unknown host");
    assert!(p.msg.contains("nowhere"), "{p:?}");
    req.host = None;
    req.permission = Some(Permission::WriteDelete);
    let r = api.call("POST", "/folders", USER, &body(&req)).await;
    let _: Problem = answer(&r, 400, "permission wd");
    // A usage mode that is not one is refused, naming the field; the folder is not made
    // (it used to be stored with the unknown word).
    let mut odd = body(&new_folder("odd"));
    odd["usage_mode"] = json!("banana");
    let r = api.call("POST", "/folders", USER, &odd).await;
    let p: Problem = answer(&r, 400, "usage_mode banana");
    assert!(p.msg.starts_with("usage_mode: "), "{p:?}");
    let r = api.call("GET", "/folders", USER, &Value::Null).await;
    let listed: Vec<Folder> = answer(&r, 200, "the listing");
    assert!(!listed.iter().any(|f| f.name == "odd"), "{listed:?}");
    let r = api
        .send(
            "GET",
            "/storage/download?token=nope",
            None,
            "",
            &[],
            Vec::new(),
        )
        .await;
    let _: Problem = answer(&r, 403, "a download with an unknown token");

    // A body that lacks a required string names the first one it lacks.
    let id = create(&api, USER, &new_folder("files")).await.id;
    for (op, b, missing) in [
        ("rename-file", json!({"new_name": "b"}), "target_path"),
        (
            "rename-file",
            json!({"target_path": "a", "new_name": 5}),
            "new_name",
        ),
        ("rename-file", json!(["a", "b"]), "target_path"),
        ("move-file", json!({"src": null, "dst": "x"}), "src"),
        ("request-download", json!({}), "path"),
        ("rename", json!({"name": "x"}), "new_name"),
    ] {
        let r = api
            .call("POST", &format!("/folders/{id}/{op}"), USER, &b)
            .await;
        let p: Problem = answer(&r, 400, op);
        assert_eq!(p.msg, format!("{missing} is required"), "{op} {b}");
    }
    let r = api
        .call("DELETE", "/folders", USER, &json!({"id": 1}))
        .await;
    let p: Problem = answer(&r, 400, "delete without an id");
    assert_eq!(p.msg, "id is required");
}
