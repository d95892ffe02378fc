//! The open-file limit. Every followed sub-task holds a connection to its agent, and a worker
//! follows up to `temporal.follow_slots` (1,000 by default) at once; the usual soft limit of 1,024
//! would run out first. Like the Go runtime, Baton raises its soft limit to the hard limit.

/// Raises the soft limit on open files to the hard limit, and returns the limit now in force.
#[allow(unsafe_code, reason = "a libc call, with its SAFETY comment")]
pub fn raise_to_hard_limit() -> std::io::Result<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed to them.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            limit = raised;
        }
    }
    Ok(limit.rlim_cur)
}

#[cfg(test)]
mod tests {
    #[test]
    #[allow(unsafe_code, reason = "a libc call, with its SAFETY comment")]
    fn the_soft_limit_ends_at_the_hard_limit() {
        let limit = super::raise_to_hard_limit().unwrap();
        let mut now = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as above.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) }, 0);
        assert_eq!(now.rlim_cur, now.rlim_max);
        assert_eq!(limit, now.rlim_cur);
    }
}
