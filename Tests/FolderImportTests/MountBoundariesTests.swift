// The walk's mount boundaries: which mount holds a path, read from a mountinfo table (proc(5)).
@testable import FolderImport
import XCTest

final class MountBoundariesTests: XCTestCase {
    static let table = """
        22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
        23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
        24 22 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw
        51 22 0:45 / /home/ann/Photos rw,nosuid,nodev,relatime shared:30 - fuse.photofs photos.sqlite rw,user_id=0
        52 22 0:46 / /home/ann/My\\040NAS rw,relatime shared:31 - fuse.sshfs nas:/photos rw
        53 52 0:47 / /home/ann/My\\040NAS/Library rw,relatime shared:32 - fuse.photofs nas.sqlite rw
        54 22 0:48 / /home/ann/Photos2 rw,relatime shared:33 - ext4 /dev/sdb1 rw
        """

    func testTheLongestMountPointAboveAPathGivesItsType() {
        func type(_ path: String) -> String? { MountBoundaries.fileSystemType(of: path, mountInfo: Self.table) }
        XCTAssertEqual(type("/home/ann"), "ext4")
        XCTAssertEqual(type("/proc"), "proc")
        XCTAssertEqual(type("/proc/1/fd"), "proc")
        XCTAssertEqual(type("/home/ann/Photos"), "fuse.photofs")
        XCTAssertEqual(type("/home/ann/Photos/moments/2019"), "fuse.photofs")
        XCTAssertEqual(type("/home/ann/Photos2"), "ext4", "a name that begins with a mount point's is not inside it")
        XCTAssertEqual(type("/home/ann/My NAS/2019"), "fuse.sshfs", "\\040 is a space")
        XCTAssertEqual(type("/home/ann/My NAS/Library/regions"), "fuse.photofs", "a mount inside a mount")
        XCTAssertNil(MountBoundaries.fileSystemType(of: "/x", mountInfo: "garbage\n\n1 2 3"))
    }

    func testEscapedPaths() {
        XCTAssertEqual(MountBoundaries.unescaped("/a\\040b\\011c\\012d\\134e"), "/a b\tc\nd\\e")
        XCTAssertEqual(MountBoundaries.unescaped("/a\\9"), "/a\\9", "a cut escape is kept as it is")
        XCTAssertEqual(MountBoundaries.unescaped("/plain"), "/plain")
    }

    func testTheKernelsFileSystemsAreNotWalked() throws {
        // This machine's own /proc (every Linux has one mounted there).
        XCTAssertEqual(MountBoundaries.reasonNotToWalk("/proc"), "the kernel's proc, not photos")
        XCTAssertNil(MountBoundaries.reasonNotToWalk(NSTemporaryDirectory()))
    }
}
