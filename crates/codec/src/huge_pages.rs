//! Huge pages under the part of a large frame's buffer the frame is known
//! to fill (Linux).
//!
//! A large frame's buffer is fresh memory from the system, which the kernel
//! maps a 4 KiB page at a time as it is first written: a 10 MiB frame costs
//! 2,560 page faults, and later as many pages to unmap: in the bench's
//! HTTP 10 MiB echo, a large share of the client's time (the profile is in
//! `docs/benchmarks.md`). With `MADV_HUGEPAGE` the kernel maps that memory
//! 2 MiB at a time instead, where transparent huge pages are set to
//! `madvise` or `always` (a kernel with them off ignores the advice).
//!
//! Only whole 2 MiB blocks inside the bytes the frame will fill are advised
//! (the room a caller asks [`grow`](crate::grow::grow) for in one step: a
//! `Content-Length` body, a large string being encoded), never the spare
//! room after them, so a huge page holds no memory the frame leaves
//! unwritten and the process's resident memory is what it was. A frame
//! whose size is not known ahead (a line read 64 KiB at a time) is not
//! advised.
//!
//! Elsewhere this does nothing: macOS and Windows give no such advice for
//! memory an allocator owns.

/// The size of a huge page on x86-64 and on 4 KiB-page ARM64. Where the
/// kernel's is larger, fewer blocks qualify and the advice does less.
#[cfg(any(target_os = "linux", target_os = "android", test))]
const HUGE_PAGE: usize = 2 << 20;

/// The whole huge pages inside `[start, end)`, as offsets from `start`:
/// from the first huge-page boundary at or after `start` to the last one at
/// or before `end`. `None` when not one huge page fits.
#[cfg(any(target_os = "linux", target_os = "android", test))]
fn whole_huge_pages(start: usize, end: usize) -> Option<std::ops::Range<usize>> {
    let first = start.checked_next_multiple_of(HUGE_PAGE)?;
    let last = end - end % HUGE_PAGE;
    (last > first).then(|| first - start..last - start)
}

/// Advises huge pages for the whole huge pages among the first `filled`
/// bytes of `spare` (a buffer's room past its contents, which the frame is
/// about to fill).
#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(
    unsafe_code,
    reason = "madvise is unsafe for advice that discards memory; this one only sets the page size"
)]
pub(crate) fn advise(spare: &mut [std::mem::MaybeUninit<u8>], filled: usize) {
    let filled = filled.min(spare.len());
    let start = spare.as_ptr() as usize;
    let Some(pages) = whole_huge_pages(start, start + filled) else {
        return;
    };
    let len = pages.len();
    let at = spare[pages].as_mut_ptr().cast::<std::ffi::c_void>();
    // SAFETY: the range lies inside `spare`, memory this buffer alone owns
    // (it is borrowed mutably), and `MADV_HUGEPAGE` changes only how the
    // kernel maps it, never what it holds. An error (a kernel built without
    // transparent huge pages) leaves the memory as it was, so it is ignored.
    let _ = unsafe { rustix::mm::madvise(at, len, rustix::mm::Advice::LinuxHugepage) };
}

/// Does nothing: only Linux takes the advice.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn advise(_spare: &mut [std::mem::MaybeUninit<u8>], _filled: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    #[test]
    fn only_whole_huge_pages_inside_the_range_are_advised() {
        // Starting just past a boundary: the first whole page is the next.
        assert_eq!(
            whole_huge_pages(2 * MIB + 16, 10 * MIB + 100),
            Some(2 * MIB - 16..8 * MIB - 16)
        );
        // On boundaries at both ends: every page.
        assert_eq!(whole_huge_pages(4 * MIB, 8 * MIB), Some(0..4 * MIB));
        // Exactly one page.
        assert_eq!(whole_huge_pages(2 * MIB, 4 * MIB), Some(0..2 * MIB));
        // Less than a whole page between the boundaries: nothing.
        assert_eq!(whole_huge_pages(2 * MIB + 1, 4 * MIB + 10), None);
        assert_eq!(whole_huge_pages(16, 3 * MIB), None);
        assert_eq!(whole_huge_pages(0, 0), None);
    }

    #[test]
    fn the_end_is_never_rounded_up() {
        let end = 6 * MIB - 1;
        let pages = whole_huge_pages(0, end).expect("two pages fit");
        assert_eq!(pages, 0..4 * MIB);
        assert!(pages.end <= end);
    }

    #[test]
    fn an_address_near_the_top_gives_none_not_a_panic() {
        assert_eq!(whole_huge_pages(usize::MAX - 10, usize::MAX), None);
    }

    /// Whether the mapping of `/proc/self/smaps` that holds `addr` is
    /// advised huge pages (`hg` among its `VmFlags`).
    #[cfg(target_os = "linux")]
    fn advised(addr: usize) -> bool {
        let thp = std::path::Path::new("/sys/kernel/mm/transparent_hugepage");
        assert!(
            thp.exists(),
            "this test needs a kernel with transparent huge pages ({} is missing)",
            thp.display()
        );
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps is readable");
        let mut inside = false;
        for line in smaps.lines() {
            let range = line
                .split_whitespace()
                .next()
                .and_then(|r| r.split_once('-'));
            let mapping = range.and_then(|(a, b)| {
                Some((
                    usize::from_str_radix(a, 16).ok()?,
                    usize::from_str_radix(b, 16).ok()?,
                ))
            });
            if let Some((from, to)) = mapping.filter(|_| !line.starts_with("VmFlags")) {
                inside = (from..to).contains(&addr);
            } else if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
                return flags.split_whitespace().any(|f| f == "hg");
            }
        }
        panic!("no mapping holds {addr:#x}");
    }

    /// Asserts that the whole huge pages among the `filled` bytes from
    /// `start` are advised, and the byte after the last of them is not.
    #[cfg(target_os = "linux")]
    fn assert_advised_up_to(start: usize, filled: usize) {
        let pages = whole_huge_pages(start, start + filled).expect("pages fit");
        assert!(
            advised(start + pages.start),
            "the first whole page is advised"
        );
        assert!(
            advised(start + pages.end - 1),
            "the last whole page is advised"
        );
        assert!(
            !advised(start + pages.end),
            "the room past the frame is not"
        );
        if pages.start > 0 {
            assert!(!advised(start + pages.start - 1), "nor the part before");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_kernel_is_told_and_only_for_the_filled_part() {
        let mut buf: Vec<u8> = Vec::with_capacity(40 * MIB);
        let filled = 20 * MIB + 12_345;
        let spare = buf.spare_capacity_mut();
        let start = spare.as_ptr() as usize;
        advise(spare, filled);
        assert_advised_up_to(start, filled);
        assert!(!advised(start + 30 * MIB), "nor anything further on");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_frame_of_known_size_grows_into_huge_pages_and_one_of_unknown_size_does_not() {
        use crate::grow::grow;
        let max = crate::DEFAULT_MAX_FRAME_LEN;

        // A 20 MiB body announced at once (`Content-Length`, a large string),
        // in a `Vec` and in a `BytesMut` (which the transports read into).
        let mut known = vec![7u8; 1000];
        grow(&mut known, 20 * MIB, max);
        assert_advised_up_to(known.spare_capacity_mut().as_ptr() as usize, 20 * MIB);
        let mut known = bytes::BytesMut::from(&[7u8; 1000][..]);
        grow(&mut known, 20 * MIB, max);
        assert_advised_up_to(known.spare_capacity_mut().as_ptr() as usize, 20 * MIB);

        // A line read a piece at a time: the step is taken for one piece.
        let mut unknown = vec![7u8; crate::grow::LARGE_FRAME_LEN - 100];
        grow(&mut unknown, 64 << 10, max);
        let start = unknown.spare_capacity_mut().as_ptr() as usize;
        for offset in (0..unknown.capacity() - unknown.len()).step_by(HUGE_PAGE) {
            assert!(!advised(start + offset), "nothing is advised at {offset}");
        }
    }
}
