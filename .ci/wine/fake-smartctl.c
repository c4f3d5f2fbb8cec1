/* Test fixture, never shipped: a stand-in for smartmontools' smartctl.exe, so that `diskmeter
 * health` runs end to end under Wine. It appends its arguments to calls.txt beside itself, then
 * prints version.json (for --version) or answer.json (anything else) from the same folder, and
 * exits with the number in exit.txt there (0 when there is none), as smartctl's bitmask. */
#include <stdio.h>
#include <string.h>
#include <windows.h>

static char dir[MAX_PATH];

static FILE *open_beside(const char *name, const char *mode)
{
    char path[MAX_PATH + 64];
    snprintf(path, sizeof path, "%s\\%s", dir, name);
    return fopen(path, mode);
}

int main(int argc, char **argv)
{
    DWORD n = GetModuleFileNameA(NULL, dir, MAX_PATH);
    char *slash = strrchr(dir, '\\');
    if (n == 0 || slash == NULL)
        return 64;
    *slash = '\0';

    const char *answer = "answer.json";
    FILE *calls = open_beside("calls.txt", "ab"); /* binary: plain \n line ends */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0)
            answer = "version.json";
        if (calls)
            fprintf(calls, i > 1 ? " %s" : "%s", argv[i]);
    }
    if (calls) {
        fputc('\n', calls);
        fclose(calls);
    }

    FILE *f = open_beside(answer, "rb");
    if (!f)
        return 2; /* smartctl's bit 1: the device could not be opened */
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, got, stdout);
    fclose(f);

    int code = 0;
    FILE *e = open_beside("exit.txt", "r");
    if (e) {
        if (fscanf(e, "%d", &code) != 1)
            code = 0;
        fclose(e);
    }
    return code;
}
