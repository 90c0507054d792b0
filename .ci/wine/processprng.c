/* processprng.c: a bcryptprimitives.dll stand-in for Debian's Wine 8, which
 * lacks ProcessPrng; the Go runtime (1.22 and later) loads this DLL and
 * resolves ProcessPrng at start, and dies without it.
 *
 * ProcessPrng fills the buffer from RtlGenRandom (advapi32 SystemFunction036).
 *
 * Because every Go process loads this DLL at start, it also carries one
 * Wine 8 compatibility fix: Wine 8 answers NtSetInformationFile with
 * FileDispositionInformationEx (class 64) by STATUS_NOT_IMPLEMENTED, where
 * Windows before 10 1607 says STATUS_INVALID_INFO_CLASS. Go's os.RemoveAll
 * falls back to the old delete disposition only on the latter, so under
 * Wine every RemoveAll (and every t.TempDir cleanup) fails with "Invalid
 * function". On load, the DLL redirects the executable's GetProcAddress
 * import so that the NtSetInformationFile Go resolves answers class 64 with
 * STATUS_INVALID_INFO_CLASS and passes everything else to ntdll. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buf, ULONG len);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}

typedef LONG (WINAPI *setinfo_fn)(HANDLE, PVOID, PVOID, ULONG, ULONG);
typedef FARPROC (WINAPI *getproc_fn)(HMODULE, LPCSTR);

static setinfo_fn real_setinfo;
static getproc_fn real_getproc;

#define FILE_DISPOSITION_INFORMATION_EX_CLASS 64
#define STATUS_INVALID_INFO_CLASS_VALUE ((LONG)0xC0000003)

static LONG WINAPI setinfo(HANDLE h, PVOID iosb, PVOID info, ULONG len, ULONG class)
{
	if (class == FILE_DISPOSITION_INFORMATION_EX_CLASS)
		return STATUS_INVALID_INFO_CLASS_VALUE;
	return real_setinfo(h, iosb, info, len, class);
}

static FARPROC WINAPI getproc(HMODULE mod, LPCSTR name)
{
	FARPROC p = real_getproc(mod, name);
	if (p != NULL && p == (FARPROC)real_setinfo)
		return (FARPROC)setinfo;
	return p;
}

/* redirect_getproc replaces every import slot of the executable that holds
 * GetProcAddress. */
static void redirect_getproc(void)
{
	BYTE *base = (BYTE *)GetModuleHandleW(NULL);
	IMAGE_NT_HEADERS *nt = (IMAGE_NT_HEADERS *)(base + ((IMAGE_DOS_HEADER *)base)->e_lfanew);
	IMAGE_DATA_DIRECTORY dir = nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT];
	IMAGE_IMPORT_DESCRIPTOR *imp;
	if (dir.VirtualAddress == 0)
		return;
	for (imp = (IMAGE_IMPORT_DESCRIPTOR *)(base + dir.VirtualAddress); imp->Name != 0; imp++) {
		IMAGE_THUNK_DATA *t;
		for (t = (IMAGE_THUNK_DATA *)(base + imp->FirstThunk); t->u1.Function != 0; t++) {
			DWORD old;
			if ((FARPROC)t->u1.Function != (FARPROC)real_getproc)
				continue;
			if (VirtualProtect(&t->u1.Function, sizeof t->u1.Function, PAGE_READWRITE, &old)) {
				t->u1.Function = (ULONG_PTR)getproc;
				VirtualProtect(&t->u1.Function, sizeof t->u1.Function, old, &old);
			}
		}
	}
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
	(void)inst;
	(void)reserved;
	if (reason == DLL_PROCESS_ATTACH) {
		real_getproc = (getproc_fn)GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "GetProcAddress");
		real_setinfo = (setinfo_fn)real_getproc(GetModuleHandleW(L"ntdll.dll"), "NtSetInformationFile");
		if (real_getproc != NULL && real_setinfo != NULL)
			redirect_getproc();
	}
	return TRUE;
}
