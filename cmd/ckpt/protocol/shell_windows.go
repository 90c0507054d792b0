package protocol

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// shellCommand runs command through cmd.exe, the line passed as typed. It
// is started suspended: runShell puts it in a job object before it runs,
// so that everything it starts is in the job too.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	c := exec.CommandContext(ctx, "cmd.exe")
	c.SysProcAttr = &syscall.SysProcAttr{CmdLine: `cmd.exe /d /s /c "` + command + `"`, CreationFlags: windows.CREATE_SUSPENDED}
	// Outside a job, a process the command left holding its output does
	// not keep the bisect waiting.
	c.WaitDelay = 4 * time.Second
	return c
}

// runShell runs c, made by shellCommand, in a job object of its own: a
// cancellation ends the whole job (cmd.exe and all it started, which a
// kill of cmd.exe alone would leave running), and so does cmd.exe's exit,
// so that nothing the command started is left running (a server it
// started for the test) nor holds its output open. Where the process may
// not join a job (one ckpt runs in forbids it, before Windows 8), cmd.exe
// alone is ended.
func runShell(c *exec.Cmd) error {
	job, err := killOnCloseJob()
	if err != nil {
		return err
	}
	defer windows.CloseHandle(job) // ends whatever is still in the job
	var inJob atomic.Bool
	c.Cancel = func() error {
		if inJob.Load() {
			return windows.TerminateJobObject(job, 1)
		}
		return c.Process.Kill()
	}
	if err := c.Start(); err != nil {
		return err
	}
	proc, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(c.Process.Pid))
	if err != nil {
		c.Process.Kill()
		return errors.Join(fmt.Errorf("opening the test command's process: %w", err), c.Wait())
	}
	defer windows.CloseHandle(proc)
	inJob.Store(windows.AssignProcessToJobObject(job, proc) == nil)
	if err := resumeThreads(uint32(c.Process.Pid)); err != nil {
		c.Process.Kill()
		return errors.Join(fmt.Errorf("starting the test command: %w", err), c.Wait())
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		if _, err := windows.WaitForSingleObject(proc, windows.INFINITE); err == nil && inJob.Load() {
			windows.TerminateJobObject(job, 1)
		}
	}()
	err = c.Wait()
	<-exited
	return err
}

// killOnCloseJob is a new job object whose processes end when its last
// handle is closed.
func killOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("creating a job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("setting up a job object: %w", err)
	}
	return job, nil
}

// resumeThreads resumes the threads of process pid, started suspended.
func resumeThreads(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &entry); err == nil; err = windows.Thread32Next(snap, &entry) {
		if entry.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return err
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return err
	}
	if resumed == 0 {
		return errors.New("no thread to resume")
	}
	return nil
}
