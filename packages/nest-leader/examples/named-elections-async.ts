import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { LeaderModule } from 'nest-leader';

@Module({
  imports: [
    // Without forRoot() a named election starts from the library's defaults.
    LeaderModule.registerElectionAsync({
      name: 'reconciler', // static: it names the election's providers
      imports: [ConfigModule.forRoot()],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        leaseName: config.getOrThrow<string>('RECONCILER_LEASE'),
        namespace: config.get<string>('LEASE_NAMESPACE'),
      }),
    }),
  ],
})
export class AppModule {}
