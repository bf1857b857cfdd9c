//! The folders area's bodies and routes: data folders (vfolders), the files inside them, and
//! the unsigned transfer URLs that uploads (a TUS subset) and downloads use.
//!
//! `folder`: a folder and its CRUD requests; `hosts`: the storage hosts; `files`: file
//! operations inside a folder; `transfers`: the upload and download tickets.

pub mod files;
pub mod folder;
pub mod hosts;
pub mod sftp;
pub mod sharing;
pub mod transfers;

pub use files::{
    DeleteFiles, Done, FileEntry, FileType, Listing, Mkdir, MkdirAnswer, MkdirItem, MkdirRefused,
    MkdirResults, MoveFile, Paths, RenameFile,
};
pub use folder::{
    CreateFolder, Folder, FolderId, FolderRef, FolderStatus, IdLookup, Ownership, Permission,
    RenameFolder, Size, UsageMode,
};
pub use hosts::{Backend, Capability, Hosts, VolumeInfo, VolumeUsage};
pub use sftp::SftpAccess;
pub use sharing::{
    CloneFolder, Cloned, Invitation, InvitationRef, Invitations, Invite, Invited, Leave, Share,
    ShareEntry, ShareList, Shared, SharedTo, Skipped, Unshare, Unshared, UpdateInvitation,
    UpdateShare,
};
pub use transfers::{RequestDownload, RequestUpload, Ticket};

use crate::route::{Body, Route, json};

/// The folders area's operations.
pub fn routes() -> Vec<Route> {
    vec![
        Route::new("post", "/folders")
            .takes(json::<CreateFolder>())
            .answers(201, json::<Folder>()),
        Route::new("get", "/folders").answers(200, json::<Vec<Folder>>()),
        Route::new("post", "/folders/{id}/sftp").answers(201, json::<SftpAccess>()),
        Route::new("delete", "/folders")
            .takes(json::<FolderId>())
            .answers(204, Body::Empty),
        // The official client sends the name as a JSON body of this GET; `?name=` also works.
        Route::new("get", "/folders/_/id")
            .takes(json::<IdLookup>())
            .answers(200, json::<FolderRef>()),
        Route::new("get", "/folders/_/hosts").answers(200, json::<Hosts>()),
        Route::new("get", "/folders/_/all_hosts").answers(200, json::<Hosts>()),
        Route::new("post", "/folders/purge")
            .takes(json::<FolderId>())
            .answers(204, Body::Empty),
        Route::new("post", "/folders/delete-from-trash-bin")
            .takes(json::<FolderId>())
            .answers(204, Body::Empty),
        Route::new("post", "/folders/restore-from-trash-bin")
            .takes(json::<FolderId>())
            .answers(204, Body::Empty),
        Route::new("delete", "/folders/{id}/force").answers(204, Body::Empty),
        Route::new("post", "/folders/{id}/invite")
            .takes(json::<Invite>())
            .answers(201, json::<Invited>()),
        Route::new("get", "/folders/invitations/list").answers(200, json::<Invitations>()),
        Route::new("get", "/folders/invitations/list-sent").answers(200, json::<Invitations>()),
        Route::new("post", "/folders/invitations/accept")
            .takes(json::<InvitationRef>())
            .answers(200, json::<sharing::Ok>()),
        Route::new("delete", "/folders/invitations/delete")
            .takes(json::<InvitationRef>())
            .answers(200, json::<sharing::Ok>()),
        Route::new("post", "/folders/invitations/update/{inv_id}")
            .takes(json::<UpdateInvitation>())
            .answers(200, json::<sharing::Ok>()),
        Route::new("post", "/folders/{id}/share")
            .takes(json::<Share>())
            .answers(201, json::<Shared>()),
        Route::new("delete", "/folders/{id}/unshare")
            .takes(json::<Unshare>())
            .answers(200, json::<Unshared>()),
        Route::new("post", "/folders/{id}/leave")
            .takes(json::<Leave>())
            .answers(200, json::<sharing::Ok>()),
        Route::new("get", "/folders/_/shared").answers(200, json::<ShareList>()),
        Route::new("post", "/folders/_/shared")
            .takes(json::<UpdateShare>())
            .answers(200, json::<sharing::Ok>()),
        Route::new("post", "/folders/{id}/clone")
            .takes(json::<CloneFolder>())
            .answers(201, json::<Cloned>()),
        Route::new("get", "/folders/{id}").answers(200, json::<Folder>()),
        Route::new("delete", "/folders/{id}").answers(204, Body::Empty),
        Route::new("post", "/folders/{id}/rename")
            .takes(json::<RenameFolder>())
            .answers(201, Body::Empty),
        Route::new("get", "/folders/{id}/files").answers(200, json::<Listing>()),
        Route::new("post", "/folders/{id}/mkdir")
            .takes(json::<Mkdir>())
            .answers(201, json::<MkdirAnswer>())
            // Every path failed: a problem with the same results.
            .also("400", json::<MkdirRefused>()),
        Route::new("post", "/folders/{id}/rename-file")
            .takes(json::<RenameFile>())
            .answers(200, json::<Done>()),
        Route::new("post", "/folders/{id}/move-file")
            .takes(json::<MoveFile>())
            .answers(200, json::<Done>()),
        Route::new("delete", "/folders/{id}/delete-files")
            .takes(json::<DeleteFiles>())
            .answers(200, json::<Done>()),
        Route::new("post", "/folders/{id}/request-upload")
            .takes(json::<RequestUpload>())
            .answers(200, json::<Ticket>()),
        Route::new("post", "/folders/{id}/request-download")
            .takes(json::<RequestDownload>())
            .answers(200, json::<Ticket>()),
        Route::new("patch", "/storage/upload")
            .takes(Body::Bytes("application/offset+octet-stream"))
            .answers(204, Body::Empty),
        Route::new("head", "/storage/upload").answers(200, Body::Empty),
        Route::new("get", "/storage/download")
            .answers(200, Body::Bytes("application/octet-stream")),
    ]
}
