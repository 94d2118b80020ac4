package purgeproof

import "golang.org/x/sys/unix"

const oDirect = unix.O_DIRECT
