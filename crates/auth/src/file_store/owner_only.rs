//! Windows: the token store's folder and files open to the user only, the
//! counterpart of the `0700` folder and `0600` files on Unix.
//!
//! Each gets a protected access list (nothing inherited from the folders
//! above) with one entry: full access for the user this process runs as,
//! named by the SID of its token. The folder's entry is inherited by what
//! is created in it, so a file is private from the moment it exists.
//!
//! The user's own SID, rather than the "owner rights" alias (`OW`): the
//! owner of a file an elevated process creates may be the Administrators
//! group, and Wine, which maps an access list to Unix permission bits,
//! grants `OW` nothing (the file would become unreadable).
//!
//! This is the crate's one module with `unsafe` code: the Win32 security
//! calls have no safe wrapper in a well-kept crate, so they are made here,
//! through Microsoft's `windows` crate, each with what makes it sound.

#![allow(
    unsafe_code,
    reason = "the Win32 security calls are unsafe FFI; this module is where they are kept"
)]

use std::io;
use std::os::windows::ffi::OsStrExt;
use std::path::Path;

use windows::Win32::Foundation::{CloseHandle, HANDLE, HLOCAL, LocalFree};
use windows::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows::Win32::Security::{
    DACL_SECURITY_INFORMATION, GetTokenInformation, PROTECTED_DACL_SECURITY_INFORMATION,
    PSECURITY_DESCRIPTOR, SetFileSecurityW, TOKEN_QUERY, TOKEN_USER, TokenUser,
};
use windows::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};
use windows::core::{PCWSTR, PWSTR};

/// The folder's access list for the user `sid`: full access to the folder
/// and (inherited: `OI`, `CI`) to every file and folder created in it;
/// nobody else is listed, and `P` stops the entries of the folders above.
pub(super) fn folder_sddl(sid: &str) -> String {
    format!("D:P(A;OICI;FA;;;{sid})")
}

/// A file's access list for the user `sid`: full access; nobody else.
pub(super) fn file_sddl(sid: &str) -> String {
    format!("D:P(A;;FA;;;{sid})")
}

/// Gives the folder at `path` the [`folder_sddl`] access list.
pub(super) fn restrict_folder(path: &Path) -> io::Result<()> {
    set_dacl(path, &folder_sddl(&current_user_sid()?))
}

/// Gives the file at `path` the [`file_sddl`] access list.
pub(super) fn restrict_file(path: &Path) -> io::Result<()> {
    set_dacl(path, &file_sddl(&current_user_sid()?))
}

/// The SID of the user this process runs as (`S-1-5-21-...`), from its
/// access token.
pub(super) fn current_user_sid() -> io::Result<String> {
    let mut token = HANDLE::default();
    // SAFETY: `GetCurrentProcess` returns a pseudo-handle that needs no
    // closing; `token` is a valid place for the opened handle.
    unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) }
        .map_err(|_| io::Error::last_os_error())?;
    let token = Token(token);
    let mut needed = 0u32;
    // SAFETY: a size query: no buffer, `needed` receives the size. It
    // fails by design (the buffer is too small), so its result is ignored.
    let _ = unsafe { GetTokenInformation(token.0, TokenUser, None, 0, &mut needed) };
    if needed == 0 {
        return Err(io::Error::last_os_error());
    }
    // `u64`s keep the buffer aligned for `TOKEN_USER`'s pointer.
    let mut buffer = vec![0u64; (needed as usize).div_ceil(8)];
    // SAFETY: `buffer` holds at least `needed` bytes and outlives the call.
    unsafe {
        GetTokenInformation(
            token.0,
            TokenUser,
            Some(buffer.as_mut_ptr().cast()),
            needed,
            &mut needed,
        )
    }
    .map_err(|_| io::Error::last_os_error())?;
    // SAFETY: the call filled `buffer` with a `TOKEN_USER`, aligned (see
    // above), whose SID points into the same buffer, alive until the end
    // of this function.
    let sid = unsafe { (*buffer.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    let mut text = PWSTR::null();
    // SAFETY: `sid` is valid (above); the call allocates `text` with
    // `LocalAlloc`, which `take_local_string` frees.
    unsafe { ConvertSidToStringSidW(sid, &mut text) }.map_err(|_| io::Error::last_os_error())?;
    take_local_string(text)
}

/// The access token of this process, closed on drop.
struct Token(HANDLE);

impl Drop for Token {
    fn drop(&mut self) {
        // SAFETY: the handle came from `OpenProcessToken` and is closed once.
        let _ = unsafe { CloseHandle(self.0) };
    }
}

/// Reads a string the system allocated with `LocalAlloc`, then frees it.
fn take_local_string(text: PWSTR) -> io::Result<String> {
    // SAFETY: `text` is a NUL-terminated string from a successful call;
    // it is read once, then freed once and not used again.
    let read = unsafe {
        let read = text.to_string();
        LocalFree(Some(HLOCAL(text.0.cast())));
        read
    };
    read.map_err(io::Error::other)
}

/// A NUL-terminated UTF-16 copy of `s`, as the `W` functions take.
fn wide(s: &std::ffi::OsStr) -> Vec<u16> {
    s.encode_wide().chain(std::iter::once(0)).collect()
}

/// A security descriptor the system allocated, freed on drop.
struct Descriptor(PSECURITY_DESCRIPTOR);

impl Descriptor {
    /// The descriptor an SDDL string describes.
    fn parse(sddl: &str) -> io::Result<Self> {
        let text = wide(sddl.as_ref());
        let mut descriptor = PSECURITY_DESCRIPTOR::default();
        // SAFETY: `text` is NUL-terminated and lives across the call; the
        // out-pointer is a valid place for the descriptor's address, which
        // the call allocates with `LocalAlloc` (freed in `Drop`).
        unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                PCWSTR(text.as_ptr()),
                SDDL_REVISION_1,
                &mut descriptor,
                None,
            )
        }
        .map_err(|_| io::Error::last_os_error())?;
        Ok(Self(descriptor))
    }
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        // SAFETY: the pointer came from `LocalAlloc` in `parse`, is not
        // used after this, and is freed once.
        unsafe {
            LocalFree(Some(HLOCAL(self.0.0)));
        }
    }
}

/// Replaces the access list of the file or folder at `path` with `sddl`'s,
/// marked protected so that nothing is inherited from above.
fn set_dacl(path: &Path, sddl: &str) -> io::Result<()> {
    let descriptor = Descriptor::parse(sddl)?;
    let name = wide(path.as_os_str());
    // SAFETY: `name` is NUL-terminated and `descriptor` a valid
    // self-relative descriptor; both outlive the call, which only reads them.
    let set = unsafe {
        SetFileSecurityW(
            PCWSTR(name.as_ptr()),
            DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
            descriptor.0,
        )
    };
    if set.as_bool() {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The access list of the file or folder at `path`, as SDDL: what the
/// tests read.
#[cfg(test)]
pub(super) fn dacl_of(path: &Path) -> io::Result<String> {
    use windows::Win32::Security::Authorization::ConvertSecurityDescriptorToStringSecurityDescriptorW;
    use windows::Win32::Security::GetFileSecurityW;

    let name = wide(path.as_os_str());
    let mut needed = 0u32;
    // SAFETY: a size query: no buffer (length 0), `needed` receives the size.
    let _ = unsafe {
        GetFileSecurityW(
            PCWSTR(name.as_ptr()),
            DACL_SECURITY_INFORMATION.0,
            None,
            0,
            &mut needed,
        )
    };
    if needed == 0 {
        return Err(io::Error::last_os_error());
    }
    // `u64`s keep the buffer aligned for the descriptor's fields.
    let mut buffer = vec![0u64; (needed as usize).div_ceil(8)];
    let descriptor = PSECURITY_DESCRIPTOR(buffer.as_mut_ptr().cast());
    // SAFETY: `buffer` holds `needed` bytes and outlives the call.
    let got = unsafe {
        GetFileSecurityW(
            PCWSTR(name.as_ptr()),
            DACL_SECURITY_INFORMATION.0,
            Some(descriptor),
            needed,
            &mut needed,
        )
    };
    if !got.as_bool() {
        return Err(io::Error::last_os_error());
    }
    let mut text = PWSTR::null();
    // SAFETY: `descriptor` is the valid descriptor just read into `buffer`;
    // the call allocates `text` with `LocalAlloc`, freed below.
    unsafe {
        ConvertSecurityDescriptorToStringSecurityDescriptorW(
            descriptor,
            SDDL_REVISION_1,
            DACL_SECURITY_INFORMATION,
            &mut text,
            None,
        )
    }
    .map_err(|_| io::Error::last_os_error())?;
    take_local_string(text)
}
